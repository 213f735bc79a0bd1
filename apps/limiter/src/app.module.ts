import { Module } from '@nestjs/common';
import { HealthController } from './health/health.controller';
import { HealthService } from './health/health.service';

/** A shell for now: only /healthz. The HTTP and NATS transports over the engine come next. */
@Module({
  controllers: [HealthController],
  providers: [HealthService],
})
export class AppModule {}
