import { Module } from '@nestjs/common';
import { EngineHostModule } from './engine-host/engine-host.module';
import { HealthController } from './health/health.controller';
import { HealthService } from './health/health.service';
import { HttpModule } from './http/http.module';
import { NatsModule } from './nats/nats.module';
import { OpsModule } from './ops/ops.module';
import { ShutdownLog } from './shutdown-log';

/**
 * The limiter: the engine host, and the transports over it. HTTP (GoCC routes, /v1, headers),
 * NATS request-reply, and operations (config file, metrics, persistence); the shutdown line.
 */
@Module({
  imports: [EngineHostModule, HttpModule, NatsModule, OpsModule],
  controllers: [HealthController],
  providers: [HealthService, ShutdownLog],
})
export class AppModule {}
