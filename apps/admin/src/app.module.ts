import { Module } from '@nestjs/common';
import { HealthController } from './health/health.controller';
import { HealthService } from './health/health.service';

/** A shell for now: the GraphQL API (/graphql) and the SQLite store are not written yet. */
@Module({
  controllers: [HealthController],
  providers: [HealthService],
})
export class AppModule {}
