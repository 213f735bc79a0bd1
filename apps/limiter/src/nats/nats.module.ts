import { Module } from '@nestjs/common';
import { NatsRequestsService } from './nats-requests.service';
import { NatsTransport } from './nats-transport.service';

/**
 * NATS request-reply (docs/contract.md, NATS), served with the nats.js client directly rather than
 * NestJS's microservice transport: see NatsTransport for why and for the connection lifecycle.
 */
@Module({ providers: [NatsRequestsService, NatsTransport], exports: [NatsTransport] })
export class NatsModule {}
