import {
  encodeDebugListCursor,
  GOCC_QUERY,
  httpStatusForCode,
  parseGoccDebugListQuery,
  parseGoccRateQuery,
  parseKey,
  parseRelease,
  type DebugListOptions,
  type GoccDebugPage,
  type GoccDebugReply,
  type GoccRateOptions,
  type NormalisedAcquire,
  type ReleaseReply,
} from '@app/contracts';
import type { Decision, KeyLimitsView, KeyStats } from '@app/engine';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimiterService } from '../engine-host/limiter.service';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';
import type { AcquireTracer } from '../tracing/acquire-tracer';
import { Tracing } from '../tracing/tracing.service';
import { abortWhenClientLeaves } from './client-gone';
import { OneAtATime } from './one-at-a-time';
import { RateLimitHeaders } from './rate-limit-headers';
import type { FieldRefusal } from './refusal-log';
import { refuseText, sendText, TEXT, writeRaw } from './replies';
import { traceparentOf } from './traceparent-header';
import type { DebugListRoute, DebugRoute, GoccReleaseRoute, RateRoute } from './route-types';

/** A GoCC request costs one request; shared, the engine only reads it. */
const ONE_REQUEST = Object.freeze({ requests: 1 });

/** A client override applied (or none asked), or why not: the status and the parameter. */
type Override =
  { readonly ok: true } | ({ readonly ok: false; readonly status: number } & FieldRefusal);

const APPLIED: Override = { ok: true };

/** The quota field the engine names when a key's quota does not take client overrides. */
const CLIENT_OVERRIDES = 'clientOverrides';

/** The engine's names for the key's own numbers, as GoCC's parameters. */
const OVERRIDE_FIELDS: Readonly<Record<string, string>> = {
  limit: GOCC_QUERY.maxRequests,
  queueSize: GOCC_QUERY.maxRequestsInQueue,
};

/**
 * GoCC's routes (docs/contract.md, HTTP). Bodies are GoCC's: the requestId as text on 200, nothing
 * on 429, the reason as text on other refusals; the debug view is GoCC's JSON.
 */
@Injectable()
export class GoccHttpService {
  /** `GET /debug` pages, built one at a time. */
  private readonly pages = new OneAtATime();
  /** Set only with OTEL_EXPORTER_OTLP_ENDPOINT: a span per acquire. */
  private readonly tracer: AcquireTracer | undefined;

  constructor(
    private readonly limiter: LimiterService,
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
    private readonly headers: RateLimitHeaders,
    tracing: Tracing,
  ) {
    this.tracer = tracing.acquires;
  }

  /** `POST|GET /rate/:key?canWait=&maxRequests=&maxRequestsInQueue=`. */
  rate(request: FastifyRequest<RateRoute>, reply: FastifyReply): void | Promise<void> {
    const key = parseKey(request.params.key);
    if (!key.ok) return refuseText(reply, 400, key);
    const options = parseGoccRateQuery(request.query);
    if (!options.ok) return refuseText(reply, 400, options);
    const override = this.override(key.value, options.value);
    if (!override.ok) {
      // 503: draining, the limiter's state rather than the request's.
      if (override.status === 503) return sendText(reply, 503, override.reason);
      return refuseText(reply, override.status, override);
    }
    const wait = options.value.canWait;
    const input: NormalisedAcquire = { key: key.value, cost: ONE_REQUEST, wait };
    const signal = wait ? abortWhenClientLeaves(reply.raw) : undefined;
    const answer =
      this.tracer === undefined
        ? this.limiter.acquire(input, signal)
        : this.tracer.traced(traceparentOf(request), 'http', input, () =>
            this.limiter.acquire(input, signal),
          );
    if (answer instanceof Promise) {
      return answer.then((decision) => answerRate(reply, decision, this.headers.of(decision)));
    }
    answerRate(reply, answer, this.headers.of(answer));
  }

  /**
   * `DELETE /rate/:key/:requestId`: gives the request's cost back to its window. Always 200 for a
   * well-formed request, with `{ "released": true|false }` saying whether the id was found.
   */
  async release(request: FastifyRequest<GoccReleaseRoute>, reply: FastifyReply): Promise<void> {
    const input = parseRelease({ key: request.params.key, requestId: request.params.requestId });
    if (!input.ok) return refuseText(reply, 400, input);
    const outcome = await this.limiter.release(input.value);
    // Draining, or a cluster quota's Redis down with onStoreFailure closed: nothing was released.
    if (!outcome.ok && outcome.code === 'UNAVAILABLE') return sendText(reply, 503, outcome.reason);
    const body: ReleaseReply = { released: outcome.ok && outcome.value };
    reply.code(200).send(body);
  }

  /** `GET /debug/:key`: GoCC's view of the key, in the quota that holds it. */
  async debug(request: FastifyRequest<DebugRoute>, reply: FastifyReply): Promise<void> {
    const key = parseKey(request.params.key);
    if (!key.ok) return refuseText(reply, 400, key);
    const view = await this.debugView(key.value);
    if (typeof view === 'string') return sendText(reply, 503, view);
    reply.code(200).send(view);
  }

  /**
   * `GET /debug?limit=&cursor=`: GoCC's listing of instances, one bounded page of the keys this
   * replica holds, each in the quota holding it (the first quota on the page, for a key in two).
   * Pages are built one at a time (OneAtATime); one whose client has left is not built.
   */
  async debugList(request: FastifyRequest<DebugListRoute>, reply: FastifyReply): Promise<void> {
    const options = parseGoccDebugListQuery(request.query);
    if (!options.ok) return refuseText(reply, 400, options);
    const gone = abortWhenClientLeaves(reply.raw);
    await this.pages.run(async () => {
      if (!gone.aborted) await this.answerPage(reply, options.value);
    });
  }

  private async answerPage(reply: FastifyReply, options: DebugListOptions): Promise<void> {
    const page = this.limiter.listKeys(options.limit, options.cursor);
    // Keys are the caller's: a key named `__proto__` must be an entry, not the object's prototype.
    const body: GoccDebugPage = { Instances: Object.create(null) as GoccDebugPage['Instances'] };
    for (const { quota, key } of page.keys) {
      if (Object.hasOwn(body.Instances, key)) continue;
      const stats = await this.limiter.stats({ key, quota });
      if (!stats.ok && stats.code === 'UNAVAILABLE') return sendText(reply, 503, stats.reason);
      const limits = stats.ok ? this.limiter.keyLimits(key, quota) : undefined;
      if (!stats.ok || limits === undefined) continue;
      body.Instances[key] = debugReply(key, limits, stats.value);
    }
    if (page.next !== undefined) body.NextCursor = encodeDebugListCursor(page.next);
    reply.code(200).send(body);
  }

  /** The view, or why it cannot be given (UNAVAILABLE: draining, or Redis down). */
  private async debugView(key: string): Promise<GoccDebugReply | string> {
    const stats = await this.limiter.stats({ key });
    if (!stats.ok && stats.code === 'UNAVAILABLE') return stats.reason;
    const limits = stats.ok ? this.limiter.keyLimits(key, stats.value.quota) : undefined;
    if (!stats.ok || limits === undefined) return emptyDebugReply(key);
    return debugReply(key, limits, stats.value);
  }

  /**
   * Client overrides, with the operator's consent (REQUESTS_CAN_SET_RATE / _MOD_QUEUE) and on a
   * quota that takes them (`clientOverrides`: GoCC's own quotas), change the key's own limit and
   * queue size in place, as GoCC's limiter takes them: its count is kept.
   */
  private override(key: string, options: GoccRateOptions): Override {
    const { maxRequests, maxRequestsInQueue } = options;
    if (maxRequests === undefined && maxRequestsInQueue === undefined) return APPLIED;
    if (maxRequests !== undefined && !this.settings.requestsCanSetRate) {
      return forbidden(GOCC_QUERY.maxRequests, 'REQUESTS_CAN_SET_RATE');
    }
    if (maxRequestsInQueue !== undefined && !this.settings.requestsCanModQueue) {
      return forbidden(GOCC_QUERY.maxRequestsInQueue, 'REQUESTS_CAN_MOD_QUEUE');
    }
    const set = this.limiter.setKeyLimits({
      key,
      ...(maxRequests !== undefined && { limit: maxRequests }),
      ...(maxRequestsInQueue !== undefined && { queueSize: maxRequestsInQueue }),
    });
    if (set.ok) return APPLIED;
    if (set.code === 'UNAVAILABLE') {
      return { ok: false, status: 503, field: 'key', reason: set.reason };
    }
    const [engineField = '', ...rest] = set.reason.split(': ');
    // The key's quota does not take a client's numbers (its clientOverrides): 403, as without
    // the operator's consent above.
    if (engineField === CLIENT_OVERRIDES) {
      const field =
        maxRequests !== undefined ? GOCC_QUERY.maxRequests : GOCC_QUERY.maxRequestsInQueue;
      return { ok: false, status: 403, field, reason: `${field}: ${rest.join(': ')}` };
    }
    // The numbers are in range (400 above); they conflict with the key's quota: 409.
    const field = OVERRIDE_FIELDS[engineField] ?? GOCC_QUERY.maxRequests;
    return { ok: false, status: 409, field, reason: `${field}: ${rest.join(': ')}` };
  }
}

function forbidden(field: string, variable: string): Override {
  return {
    ok: false,
    status: 403,
    field,
    reason: `${field}: clients may not set this (${variable} is not true)`,
  };
}

/** 200 with the requestId as text, 429 with an empty body, the reason as text otherwise. */
function answerRate(reply: FastifyReply, decision: Decision, headers: string[]): void {
  if (decision.allowed) return writeRaw(reply, 200, headers, TEXT, decision.requestId);
  const status = httpStatusForCode(decision.code);
  if (status === 429) return writeRaw(reply, 429, headers, undefined, '');
  writeRaw(reply, status, headers, TEXT, decision.reason ?? decision.code);
}

function debugReply(key: string, { spec, own }: KeyLimitsView, stats: KeyStats): GoccDebugReply {
  // GoCC has one limit; approved/denied count in the first enforced limit's window (KeyStats).
  const limit = spec.limits.find((l) => l.limit > 0) ?? spec.limits[0];
  return {
    Key: key,
    Config: {
      WindowMillis: limit?.windowMs ?? 0,
      MaxRequestsPerWindow: limit?.limit ?? 0,
      MaxRequestsInQueue: spec.queue?.maxSize ?? 0,
    },
    NumApprovedThisWindow: stats.approved,
    NumDeniedThisWindow: stats.denied,
    NumWaiting: stats.queued,
    // GoCC's "Found": the key has a live limiter. Here: the engine holds any state for it, its
    // own limits included.
    Found:
      own ||
      stats.approved + stats.denied + stats.queued + stats.inFlight > 0 ||
      stats.limits.some((l) => l.used > 0),
  };
}

function emptyDebugReply(key: string): GoccDebugReply {
  return {
    Key: key,
    Config: { WindowMillis: 0, MaxRequestsPerWindow: 0, MaxRequestsInQueue: 0 },
    NumApprovedThisWindow: 0,
    NumDeniedThisWindow: 0,
    NumWaiting: 0,
    Found: false,
  };
}
