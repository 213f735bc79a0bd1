import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import { GraphQLModule } from '@nestjs/graphql';
import { AuditService } from './audit/audit.service';
import { ConsoleModule } from './console/console.module';
import { ControlModule } from './control';
import { GraphiqlModule } from './graphiql/graphiql.module';
import { AdminAuthGuard } from './graphql/auth.guard';
import { graphqlOptions } from './graphql/graphql-options';
import { ListSizesService } from './graphql/list-sizes.service';
import { OperationErrorFilter } from './graphql/operation-error.filter';
import { OperationLimitsInterceptor } from './graphql/operation-limits.interceptor';
import { QueryLimitsModule } from './graphql/query-limits.module';
import { RESOLVERS } from './graphql/resolvers';
import { HealthController } from './health/health.controller';
import { HealthService } from './health/health.service';
import { ImportService } from './import/import.service';
import { ProviderService } from './providers/provider.service';
import { QuotaEvents } from './quotas/quota-events';
import { QuotaService } from './quotas/quota.service';
import { QuotasInForceService } from './quotas/quotas-in-force.service';
import { ADMIN_SETTINGS, readAdminSettings, type AdminSettings } from './settings/admin-settings';
import { SettingsModule } from './settings/settings.module';
import { StatsService } from './stats/stats.service';
import { StoreModule } from './store';
import { ControlSync } from './control-sync';
import { ShutdownLog } from './shutdown-log';

/**
 * The admin control plane (docs/contract.md, Admin GraphQL): GraphQL on /graphql over SQLite
 * (MikroORM), publishing to the limiters through a JetStream KV bucket and reading their stats from
 * NATS; the web console on /.
 */
@Module({})
export class AppModule {
  static forRoot(settings: AdminSettings = readAdminSettings()): DynamicModule {
    return {
      module: AppModule,
      imports: [
        SettingsModule.forRoot(settings),
        StoreModule,
        ControlModule,
        QueryLimitsModule,
        GraphQLModule.forRootAsync<MercuriusDriverConfig>({
          driver: MercuriusDriver,
          imports: [QueryLimitsModule],
          inject: [ADMIN_SETTINGS, ListSizesService],
          useFactory: graphqlOptions,
        }),
        // A development tool: off in production, as introspection is.
        ...(settings.production ? [] : [GraphiqlModule]),
        ConsoleModule,
      ],
      controllers: [HealthController],
      providers: [
        HealthService,
        AdminAuthGuard,
        { provide: APP_INTERCEPTOR, useClass: OperationLimitsInterceptor },
        { provide: APP_FILTER, useClass: OperationErrorFilter },
        QuotaEvents,
        QuotaService,
        QuotasInForceService,
        ProviderService,
        StatsService,
        AuditService,
        ImportService,
        ControlSync,
        ShutdownLog,
        ...RESOLVERS,
      ],
    };
  }
}
