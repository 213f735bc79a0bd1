import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import type { Msg } from 'nats';
import { eventPattern } from './nats-handlers';
import { NatsRequestsService, type NatsReply } from './nats-requests.service';

/**
 * The NATS operations as Nest message handlers, for requests sent through a Nest ClientProxy
 * (the envelope form): the payload is the contract's JSON request as bytes, the context the NATS
 * message. NatsTransport routes each subject to its pattern here (the subject prefix is a setting,
 * so patterns are operation names, not subjects). Plain JSON requests skip this pipeline.
 */
@Controller()
export class NatsLimiterController {
  constructor(private readonly requests: NatsRequestsService) {}

  @MessagePattern('acquire')
  acquire(@Payload() data: Uint8Array, @Ctx() msg: Msg): NatsReply {
    return this.requests.acquire(data, msg);
  }

  @MessagePattern('batch')
  batch(@Payload() data: Uint8Array, @Ctx() msg: Msg): NatsReply {
    return this.requests.batch(data, msg);
  }

  @MessagePattern('decide')
  decide(@Payload() data: Uint8Array, @Ctx() msg: Msg): NatsReply {
    return this.requests.decide(data, msg);
  }

  @MessagePattern('release')
  release(@Payload() data: Uint8Array, @Ctx() msg: Msg): NatsReply {
    return this.requests.release(data, msg);
  }

  @MessagePattern('usage')
  usage(@Payload() data: Uint8Array, @Ctx() msg: Msg): NatsReply {
    return this.requests.usage(data, msg);
  }

  @MessagePattern('stats')
  stats(@Payload() data: Uint8Array, @Ctx() msg: Msg): NatsReply {
    return this.requests.stats(data, msg);
  }

  /** `emit` of a release: served, nothing answered. */
  @EventPattern(eventPattern('release'))
  releaseEvent(@Payload() data: Uint8Array, @Ctx() msg: Msg): NatsReply {
    return this.requests.release(data, msg);
  }

  /** `emit` of a usage record: served, nothing answered. */
  @EventPattern(eventPattern('usage'))
  usageEvent(@Payload() data: Uint8Array, @Ctx() msg: Msg): NatsReply {
    return this.requests.usage(data, msg);
  }
}
