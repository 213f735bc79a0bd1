import {
  invalidAcquireReply,
  invalidRequestReply,
  parseAcquireJson,
  parseBatchJson,
  parseDecideJson,
  parseReleaseJson,
  parseStatsJson,
  parseUsageJson,
  type AcquireReply,
  type BatchReply,
  type ReleaseReply,
  type UsageReply,
} from '@app/contracts';
import type { Decision, KeyStats } from '@app/engine';
import { Injectable } from '@nestjs/common';
import { failureReply } from '../engine-host/failure-reply';
import { LimiterService } from '../engine-host/limiter.service';
import { whenDone } from '../engine-host/maybe-async';
import { asBuffer, encodeJson, rawJson } from './nats-codec';

/** A reply ready to publish; an acquire that waits replies when the limiter answers it. */
export type NatsReply = Uint8Array | Promise<Uint8Array>;

/** `requests[i]` of a batch that is JSON, for echoing fields of refused entries. */
function batchEntry(raw: unknown, index: number): unknown {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const requests = (raw as { requests?: unknown }).requests;
  return Array.isArray(requests) ? (requests as unknown[])[index] : undefined;
}

/**
 * The NATS operations of docs/contract.md (Messages, NATS): payload bytes in, reply bytes out.
 * Every request gets exactly one reply: invalid input is answered INVALID_REQUEST naming the field,
 * never thrown. The engine work is the LimiterService's; this class only decodes and encodes.
 */
@Injectable()
export class NatsRequestsService {
  constructor(private readonly limiter: LimiterService) {}

  acquire(data: Uint8Array): NatsReply {
    const parsed = parseAcquireJson(asBuffer(data));
    if (!parsed.ok) return encodeJson(invalidAcquireReply(parsed, rawJson(data)));
    const decision = this.limiter.acquire(parsed.value);
    return decision instanceof Promise ? decision.then(encodeJson) : encodeJson(decision);
  }

  decide(data: Uint8Array): NatsReply {
    const parsed = parseDecideJson(asBuffer(data));
    if (!parsed.ok) return encodeJson(invalidAcquireReply(parsed, rawJson(data)));
    const decision = this.limiter.decide(parsed.value);
    return decision instanceof Promise
      ? decision.then((d) => encodeJson(d satisfies AcquireReply))
      : encodeJson(decision satisfies AcquireReply);
  }

  /** A batch that is not `{ requests: [...] }` is refused as a whole; bad entries in their place. */
  batch(data: Uint8Array): NatsReply {
    const parsed = parseBatchJson(asBuffer(data));
    if (!parsed.ok) return encodeJson(invalidRequestReply(parsed));
    let raw: unknown;
    const replies = this.limiter.batch(parsed.value, (failure, index) => {
      raw ??= rawJson(data);
      return invalidAcquireReply(failure, batchEntry(raw, index));
    });
    const encode = (all: Decision[]): Uint8Array =>
      encodeJson({ replies: all } satisfies BatchReply);
    return replies instanceof Promise ? replies.then(encode) : encode(replies);
  }

  release(data: Uint8Array): NatsReply {
    const parsed = parseReleaseJson(asBuffer(data));
    if (!parsed.ok) return encodeJson(invalidRequestReply(parsed));
    return whenDone(this.limiter.release(parsed.value), (outcome) =>
      outcome.ok
        ? encodeJson({ released: outcome.value } satisfies ReleaseReply)
        : encodeJson(failureReply(outcome)),
    );
  }

  usage(data: Uint8Array): NatsReply {
    const parsed = parseUsageJson(asBuffer(data));
    if (!parsed.ok) return encodeJson(invalidRequestReply(parsed));
    return whenDone(this.limiter.usage(parsed.value), (outcome) =>
      outcome.ok
        ? encodeJson({ ok: true, usage: outcome.value } satisfies UsageReply)
        : encodeJson(failureReply(outcome)),
    );
  }

  stats(data: Uint8Array): NatsReply {
    const parsed = parseStatsJson(asBuffer(data));
    if (!parsed.ok) return encodeJson(invalidRequestReply(parsed));
    return whenDone(this.limiter.stats(parsed.value), (outcome) =>
      outcome.ok ? encodeJson(outcome.value satisfies KeyStats) : encodeJson(failureReply(outcome)),
    );
  }
}
