import {
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { RateLimitClient } from '..';
import { RateLimitConnection } from './rate-limit.connection';
import { RateLimitGuard } from './rate-limit.guard';
import {
  RATE_LIMIT_MODULE_OPTIONS,
  type RateLimitModuleAsyncOptions,
  type RateLimitModuleOptions,
} from './rate-limit.options';

/** Options the module reads itself; the rest goes to the RateLimitClient. */
const MODULE_ONLY = [
  'servers',
  'connectionName',
  'connection',
  'quota',
  'key',
  'cost',
  'global',
] as const;

function clientOptionsOf(options: RateLimitModuleOptions, connection: RateLimitConnection) {
  const client: Record<string, unknown> = { ...options };
  for (const name of MODULE_ONLY) delete client[name];
  const rest = client as Omit<RateLimitModuleOptions, (typeof MODULE_ONLY)[number]>;
  return { ...rest, connection: connection.connection };
}

const sharedProviders: Provider[] = [
  {
    provide: RateLimitConnection,
    inject: [RATE_LIMIT_MODULE_OPTIONS],
    useFactory: (options: RateLimitModuleOptions) => RateLimitConnection.open(options),
  },
  {
    provide: RateLimitClient,
    inject: [RATE_LIMIT_MODULE_OPTIONS, RateLimitConnection],
    useFactory: (options: RateLimitModuleOptions, connection: RateLimitConnection) =>
      new RateLimitClient(clientOptionsOf(options, connection)),
  },
  RateLimitGuard,
];

const exported = [RateLimitClient, RateLimitGuard, RATE_LIMIT_MODULE_OPTIONS];

/**
 * Provides RateLimitClient (inject it in services) and RateLimitGuard. Global by default. On
 * shutdown (`app.close()`, or a signal with `enableShutdownHooks()`), after the server stopped
 * taking requests, the client sends what it queued and a connection the module opened is drained.
 */
@Module({})
export class RateLimitModule implements OnApplicationShutdown {
  constructor(private readonly moduleRef: ModuleRef) {}

  static forRoot(options: RateLimitModuleOptions): DynamicModule {
    return {
      module: RateLimitModule,
      global: options.global ?? true,
      providers: [{ provide: RATE_LIMIT_MODULE_OPTIONS, useValue: options }, ...sharedProviders],
      exports: exported,
    };
  }

  static forRootAsync(options: RateLimitModuleAsyncOptions): DynamicModule {
    return {
      module: RateLimitModule,
      global: options.global ?? true,
      imports: options.imports ?? [],
      providers: [
        {
          provide: RATE_LIMIT_MODULE_OPTIONS,
          inject: options.inject ?? [],
          useFactory: options.useFactory,
        },
        ...sharedProviders,
      ],
      exports: exported,
    };
  }

  async onApplicationShutdown(): Promise<void> {
    const client = this.moduleRef.get(RateLimitClient, { strict: true });
    const connection = this.moduleRef.get(RateLimitConnection, { strict: true });
    try {
      await client.close();
    } finally {
      await connection.close();
    }
  }
}
