import { Module, type DynamicModule } from '@nestjs/common';
import { RateLimitModule } from '@ratelimit/client/nest';
import { GreetingsModule } from './greetings/greetings.module';
import { ReportsModule } from './reports/reports.module';
import type { Settings } from './settings';

@Module({})
export class AppModule {
  static with(settings: Settings): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // Opens its own named NATS connection and drains it on shutdown.
        RateLimitModule.forRoot({
          servers: settings.natsUrl,
          subjectPrefix: settings.subjectPrefix,
          connectionName: 'example-nest-backend',
          // No limiter answering: refuse (503) rather than let traffic through unlimited.
          failurePolicy: 'closed',
        }),
        GreetingsModule,
        ReportsModule,
      ],
    };
  }
}
