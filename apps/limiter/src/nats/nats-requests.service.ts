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
  type ErrorReply,
  type ParseFailure,
  type ReleaseReply,
  type UsageReply,
} from '@app/contracts';
import type { Decision, KeyStats } from '@app/engine';
import { Injectable, Optional } from '@nestjs/common';
import { failureReply } from '../engine-host/failure-reply';
import { LimiterService } from '../engine-host/limiter.service';
import { whenDone } from '../engine-host/maybe-async';
import type { AcquireTracer } from '../tracing/acquire-tracer';
import { Tracing } from '../tracing/tracing.service';
import { asBuffer, encodeJson, rawJson } from './nats-codec';
import { logRefusal, type HeaderSource } from './nats-log';

const TRACEPARENT = 'traceparent';

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
 * never thrown, and logged (rate-limited) with the field and the correlation id: the message's
 * X-Correlation-ID header (read only then), else its requestId. The engine work is the LimiterService's; this class
 * only decodes and encodes.
 */
@Injectable()
export class NatsRequestsService {
  /** Set only with OTEL_EXPORTER_OTLP_ENDPOINT: a span per acquire, its parent from the headers. */
  private readonly tracer: AcquireTracer | undefined;

  constructor(
    private readonly limiter: LimiterService,
    @Optional() tracing?: Tracing,
  ) {
    this.tracer = tracing?.acquires;
  }

  acquire(data: Uint8Array, source?: HeaderSource): NatsReply {
    const parsed = parseAcquireJson(asBuffer(data));
    if (!parsed.ok)
      return refused('acquire', parsed, data, source, invalidAcquireReply(parsed, rawJson(data)));
    const input = parsed.value;
    // Headers are decoded on first read: only a traced acquire reads them.
    const decision =
      this.tracer === undefined
        ? this.limiter.acquire(input)
        : this.tracer.traced(traceparentIn(source), 'nats', input, () =>
            this.limiter.acquire(input),
          );
    return decision instanceof Promise ? decision.then(encodeJson) : encodeJson(decision);
  }

  decide(data: Uint8Array, source?: HeaderSource): NatsReply {
    const parsed = parseDecideJson(asBuffer(data));
    if (!parsed.ok)
      return refused('decide', parsed, data, source, invalidAcquireReply(parsed, rawJson(data)));
    const decision = this.limiter.decide(parsed.value);
    return decision instanceof Promise
      ? decision.then((d) => encodeJson(d satisfies AcquireReply))
      : encodeJson(decision satisfies AcquireReply);
  }

  /** A batch that is not `{ requests: [...] }` is refused as a whole; bad entries in their place. */
  batch(data: Uint8Array, source?: HeaderSource): NatsReply {
    const parsed = parseBatchJson(asBuffer(data));
    if (!parsed.ok) return refused('batch', parsed, data, source, invalidRequestReply(parsed));
    let raw: unknown;
    let refusedAny = false;
    const replies = this.limiter.batch(parsed.value, (failure, index) => {
      // One line per batch, naming its first bad entry.
      if (!refusedAny) logRefusal('batch', failure, data, source);
      refusedAny = true;
      raw ??= rawJson(data);
      return invalidAcquireReply(failure, batchEntry(raw, index));
    });
    const encode = (all: Decision[]): Uint8Array =>
      encodeJson({ replies: all } satisfies BatchReply);
    return replies instanceof Promise ? replies.then(encode) : encode(replies);
  }

  release(data: Uint8Array, source?: HeaderSource): NatsReply {
    const parsed = parseReleaseJson(asBuffer(data));
    if (!parsed.ok) return refused('release', parsed, data, source, invalidRequestReply(parsed));
    return whenDone(this.limiter.release(parsed.value), (outcome) =>
      outcome.ok
        ? encodeJson({ released: outcome.value } satisfies ReleaseReply)
        : encodeJson(failureReply(outcome)),
    );
  }

  usage(data: Uint8Array, source?: HeaderSource): NatsReply {
    const parsed = parseUsageJson(asBuffer(data));
    if (!parsed.ok) return refused('usage', parsed, data, source, invalidRequestReply(parsed));
    return whenDone(this.limiter.usage(parsed.value), (outcome) =>
      outcome.ok
        ? encodeJson({ ok: true, usage: outcome.value } satisfies UsageReply)
        : encodeJson(failureReply(outcome)),
    );
  }

  stats(data: Uint8Array, source?: HeaderSource): NatsReply {
    const parsed = parseStatsJson(asBuffer(data));
    if (!parsed.ok) return refused('stats', parsed, data, source, invalidRequestReply(parsed));
    return whenDone(this.limiter.stats(parsed.value), (outcome) =>
      outcome.ok ? encodeJson(outcome.value satisfies KeyStats) : encodeJson(failureReply(outcome)),
    );
  }
}

/** The message's `traceparent` header, if it has one. */
function traceparentIn(source: HeaderSource | undefined): string | undefined {
  return source?.headers?.get(TRACEPARENT) || undefined;
}

/** Bad input: logged (rate-limited), answered `reply` (INVALID_REQUEST in the operation's shape). */
function refused(
  operation: string,
  failure: ParseFailure,
  data: Uint8Array,
  source: HeaderSource | undefined,
  reply: AcquireReply | ErrorReply,
): Uint8Array {
  logRefusal(operation, failure, data, source);
  return encodeJson(reply);
}
