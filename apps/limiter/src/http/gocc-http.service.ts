import {
  encodeDebugListCursor,
  GOCC_QUERY,
  httpStatusForCode,
  parseGoccDebugListQuery,
  parseGoccRateQuery,
  parseKey,
  parseRelease,
  type GoccDebugPage,
  type GoccDebugReply,
  type GoccRateOptions,
  type NormalisedAcquire,
  type ReleaseReply,
} from '@app/contracts';
import { InvalidQuotaError, type Decision, type KeyStats, type QuotaSpec } from '@app/engine';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimiterService } from '../engine-host/limiter.service';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';
import { abortWhenClientLeaves } from './client-gone';
import type { FieldRefusal } from './refusal-log';
import { refuseText, sendText, TEXT, writeRaw } from './replies';
import type { DebugListRoute, DebugRoute, GoccReleaseRoute, RateRoute } from './route-types';

/** A GoCC request costs one request; shared, the engine only reads it. */
const ONE_REQUEST = Object.freeze({ requests: 1 });

/** The quota a GoCC request is decided by: the key's own (undefined), a client override, or a refusal. */
type ClientQuota =
  | { readonly ok: true; readonly name: string | undefined }
  | ({ readonly ok: false; readonly status: number } & FieldRefusal);

const KEY_OWN_QUOTA: ClientQuota = { ok: true, name: undefined };

/**
 * GoCC's routes (docs/contract.md, HTTP). Bodies are GoCC's: the requestId as text on 200, nothing
 * on 429, the reason as text on other refusals; the debug view is GoCC's JSON.
 */
@Injectable()
export class GoccHttpService {
  constructor(
    private readonly limiter: LimiterService,
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
  ) {}

  /** `POST|GET /rate/:key?canWait=&maxRequests=&maxRequestsInQueue=`. */
  rate(request: FastifyRequest<RateRoute>, reply: FastifyReply): void | Promise<void> {
    const key = parseKey(request.params.key);
    if (!key.ok) return refuseText(reply, 400, key);
    const options = parseGoccRateQuery(request.query);
    if (!options.ok) return refuseText(reply, 400, options);
    const quota = this.clientQuota(options.value);
    if (!quota.ok) {
      // 503: too many different overrides in use, the limiter's state rather than bad input.
      if (quota.status === 503) return sendText(reply, 503, quota.reason);
      return refuseText(reply, quota.status, quota);
    }
    const wait = options.value.canWait;
    const input: NormalisedAcquire =
      quota.name === undefined
        ? { key: key.value, cost: ONE_REQUEST, wait }
        : { key: key.value, quota: quota.name, cost: ONE_REQUEST, wait };
    const answer = this.limiter.acquire(input, wait ? abortWhenClientLeaves(reply.raw) : undefined);
    if (answer instanceof Promise) return answer.then((decision) => answerRate(reply, decision));
    answerRate(reply, answer);
  }

  /**
   * `DELETE /rate/:key/:requestId`: gives the request's cost back to its window. Always 200 for a
   * well-formed request, with `{ "released": true|false }` saying whether the id was found.
   */
  async release(request: FastifyRequest<GoccReleaseRoute>, reply: FastifyReply): Promise<void> {
    const input = parseRelease({ key: request.params.key, requestId: request.params.requestId });
    if (!input.ok) return refuseText(reply, 400, input);
    const body: ReleaseReply = { released: false };
    // A request admitted under a client override was charged to that override's quota.
    for (const quota of [undefined, ...this.limiter.overrideQuotaNames()]) {
      const outcome = await this.limiter.release({
        ...input.value,
        ...(quota !== undefined && { quota }),
      });
      // Draining, or a cluster quota's Redis down with onStoreFailure closed: nothing was released.
      if (!outcome.ok && outcome.code === 'UNAVAILABLE')
        return sendText(reply, 503, outcome.reason);
      if (outcome.ok && outcome.value) {
        body.released = true;
        break;
      }
    }
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
   */
  async debugList(request: FastifyRequest<DebugListRoute>, reply: FastifyReply): Promise<void> {
    const options = parseGoccDebugListQuery(request.query);
    if (!options.ok) return refuseText(reply, 400, options);
    const page = this.limiter.listKeys(options.value.limit, options.value.cursor);
    const body: GoccDebugPage = { Instances: {} };
    for (const { quota, key } of page.keys) {
      if (Object.hasOwn(body.Instances, key)) continue;
      const stats = await this.limiter.stats({ key, quota });
      if (!stats.ok && stats.code === 'UNAVAILABLE') return sendText(reply, 503, stats.reason);
      const spec = stats.ok ? this.limiter.quotaSpecFor(key, quota) : undefined;
      if (!stats.ok || spec === undefined) continue;
      body.Instances[key] = debugReply(key, spec, stats.value);
    }
    if (page.next !== undefined) body.NextCursor = encodeDebugListCursor(page.next);
    reply.code(200).send(body);
  }

  /** The view, or why it cannot be given (UNAVAILABLE: draining, or Redis down). */
  private async debugView(key: string): Promise<GoccDebugReply | string> {
    let fallback: GoccDebugReply | undefined;
    for (const quota of [undefined, ...this.limiter.overrideQuotaNames()]) {
      const stats = await this.limiter.stats(quota === undefined ? { key } : { key, quota });
      if (!stats.ok && stats.code === 'UNAVAILABLE') return stats.reason;
      const spec = stats.ok ? this.limiter.quotaSpecFor(key, stats.value.quota) : undefined;
      if (!stats.ok || spec === undefined) continue;
      const view = debugReply(key, spec, stats.value);
      if (view.Found) return view;
      fallback ??= view;
    }
    return fallback ?? emptyDebugReply(key);
  }

  /** Client overrides need the operator's consent (REQUESTS_CAN_SET_RATE / _MOD_QUEUE). */
  private clientQuota(options: GoccRateOptions): ClientQuota {
    const { maxRequests, maxRequestsInQueue } = options;
    if (maxRequests === undefined && maxRequestsInQueue === undefined) return KEY_OWN_QUOTA;
    if (maxRequests !== undefined && !this.settings.requestsCanSetRate) {
      return forbidden(GOCC_QUERY.maxRequests, 'REQUESTS_CAN_SET_RATE');
    }
    if (maxRequestsInQueue !== undefined && !this.settings.requestsCanModQueue) {
      return forbidden(GOCC_QUERY.maxRequestsInQueue, 'REQUESTS_CAN_MOD_QUEUE');
    }
    try {
      const name = this.limiter.overrideQuota(maxRequests, maxRequestsInQueue);
      if (name !== undefined) return { ok: true, name };
      const field =
        maxRequests !== undefined ? GOCC_QUERY.maxRequests : GOCC_QUERY.maxRequestsInQueue;
      return {
        ok: false,
        status: 503,
        field,
        reason: `${field}: too many different client overrides are in use`,
      };
    } catch (error) {
      if (!(error instanceof InvalidQuotaError)) throw error;
      const field = error.field.startsWith('queue')
        ? GOCC_QUERY.maxRequestsInQueue
        : GOCC_QUERY.maxRequests;
      return { ok: false, status: 400, field, reason: `${field}: ${error.message}` };
    }
  }
}

function forbidden(field: string, variable: string): ClientQuota {
  return {
    ok: false,
    status: 403,
    field,
    reason: `${field}: clients may not set this (${variable} is not true)`,
  };
}

/** 200 with the requestId as text, 429 with an empty body, the reason as text otherwise. */
function answerRate(reply: FastifyReply, decision: Decision): void {
  if (decision.allowed) return writeRaw(reply, 200, decision, TEXT, decision.requestId);
  const status = httpStatusForCode(decision.code);
  if (status === 429) return writeRaw(reply, 429, decision, undefined, '');
  writeRaw(reply, status, decision, TEXT, decision.reason ?? decision.code);
}

function debugReply(key: string, spec: QuotaSpec, stats: KeyStats): GoccDebugReply {
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
    // GoCC's "Found": the key has a live limiter. Here: the engine holds any state for it.
    Found:
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
