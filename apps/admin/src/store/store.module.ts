import {
  Inject,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import { AdminStore, STORE_ORM } from './admin-store';
import { STORE_CLOCK, systemStoreClock, type StoreClock } from './clock';
import { adminDatabasePath, openStoreOrm, type StoreOrm } from './orm-config';
import { seedBuiltInProviders } from './seed';

/** What the store reads of the admin's settings. */
export type StoreSettings = Pick<AdminSettings, 'dataDir'>;

export interface StoreModuleOptions {
  /** Where the store reads time; Date.now when absent. */
  readonly clock?: StoreClock;
}

/**
 * Opens `<dataDir>/admin.sqlite`, applies pending migrations, then seeds the built-in provider
 * profiles, all before the provider resolves: nothing can inject AdminStore and read first.
 */
async function openStore(settings: StoreSettings, clock: StoreClock): Promise<StoreOrm> {
  const orm = await openStoreOrm(settings.dataDir);
  try {
    const seeded = await seedBuiltInProviders(orm, clock.now());
    const log = new Logger('AdminStore');
    log.log(`opened ${adminDatabasePath(settings.dataDir)}`);
    if (seeded.providers + seeded.models > 0) {
      log.log(`seeded ${seeded.providers} built-in providers and ${seeded.models} models`);
    }
    for (const { name, pattern } of await quotasWithoutTheirPattern(orm)) {
      log.warn(
        `quota "${name}" has the match pattern ${JSON.stringify(pattern)} of another quota ` +
          '(stored before patterns were unique): the limiters refuse the admin quotas until ' +
          'one of the two is changed or deleted',
      );
    }
    return orm;
  } catch (error) {
    await orm.close(true);
    throw error;
  }
}

/**
 * Quotas whose spec has a pattern their `match` column lacks: duplicates from before the unique
 * column, whose pattern the migration gave to the first quota by name (see its migration).
 */
async function quotasWithoutTheirPattern(
  orm: StoreOrm,
): Promise<{ name: string; pattern: string }[]> {
  return orm.em
    .fork()
    .getConnection()
    .execute<{ name: string; pattern: string }[]>(
      "select `name`, json_extract(`spec`, '$.match') as `pattern` from `quotas` " +
        "where `match` is null and json_extract(`spec`, '$.match') is not null order by `name`",
    );
}

/**
 * The admin's persistence: provides AdminStore over MikroORM/SQLite.
 *
 * Settings: import `StoreModule` as it is where ADMIN_SETTINGS (the AdminSettings of
 * readAdminSettings()) is provided by a @Global() module, or import `StoreModule.forRoot(settings)`,
 * which provides ADMIN_SETTINGS inside this module only (tests, tools). Only `dataDir` is read.
 * Time comes from STORE_CLOCK: Date.now, or `StoreModule.forRoot(settings, { clock })`.
 *
 * The ORM is closed in onApplicationShutdown, not onModuleDestroy: Nest closes the HTTP server
 * between the two, so requests still in flight during onModuleDestroy can finish their writes.
 */
@Module({
  providers: [
    { provide: STORE_CLOCK, useValue: systemStoreClock },
    {
      provide: STORE_ORM,
      inject: [ADMIN_SETTINGS, STORE_CLOCK],
      useFactory: openStore,
    },
    AdminStore,
  ],
  exports: [AdminStore],
})
export class StoreModule implements OnApplicationShutdown {
  constructor(@Inject(STORE_ORM) private readonly orm: StoreOrm) {}

  /**
   * `settings`: provided as ADMIN_SETTINGS inside this module (omit it to use a global one).
   * `clock`: replaces Date.now (tests).
   */
  static forRoot(settings?: StoreSettings, options: StoreModuleOptions = {}): DynamicModule {
    const providers: Provider[] = [];
    if (settings !== undefined) providers.push({ provide: ADMIN_SETTINGS, useValue: settings });
    if (options.clock !== undefined) {
      providers.push({ provide: STORE_CLOCK, useValue: options.clock });
    }
    return { module: StoreModule, providers };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.orm.close();
  }
}
