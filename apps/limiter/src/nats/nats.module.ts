import { Module } from '@nestjs/common';
import { NatsLimiterController } from './nats-limiter.controller';
import { NatsRequestsService } from './nats-requests.service';
import { NatsTransport } from './nats-transport.service';

/**
 * NATS request-reply (docs/contract.md, NATS): NatsTransport is the Nest transport strategy that
 * owns the connection's lifecycle and serves every subject (app.ts connects it); the controller
 * declares the operations as message and event patterns.
 */
@Module({
  controllers: [NatsLimiterController],
  providers: [NatsRequestsService, NatsTransport],
  exports: [NatsTransport],
})
export class NatsModule {}
