import type {
  AcquireReply,
  AcquireRequest,
  BatchReply,
  KeyStats,
  ReleaseReply,
  ReleaseRequest,
  StatsRequest,
  UsageReply,
  UsageRequest,
} from '@app/contracts';
import { API_ROUTES, STATS_QUERY } from '@app/contracts/routes';
import { ClientClosedError, RequestAbortedError, type UnavailableReason } from '../errors';
import {
  DEFAULT_TIMEOUT_MS,
  type CallOptions,
  type ClientAcquireReply,
  type FailurePolicy,
} from '../options';
import { policyReply, unavailableError } from '../policy-reply';
import { acquireResult, operationResult } from '../replies';
import { RequestIdGenerator } from '../request-ids';
import { acquireTimeoutMs, checkCallOptions, timerDelayMs } from '../timeouts';
import { checkAcquire, checkBatch, checkRelease, checkStats, checkUsage } from '../validate';

export interface RateLimitHttpClientOptions {
  /** The limiter's address, e.g. `http://limiter:8080`. */
  readonly baseUrl: string;
  /** Per call, default 2000; a waiting acquire waits for its maxWaitMs or deadline on top. */
  readonly timeoutMs?: number;
  /** Default 'closed'. */
  readonly failurePolicy?: FailurePolicy;
  /** Attach a generated requestId to requests that lack one. Default false. */
  readonly requestIds?: boolean;
  /** Sent with every request (an Authorization header for a gateway in front, say). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** An HTTP exchange that produced no limiter answer, and why. */
class Unanswered {
  constructor(
    readonly reason: UnavailableReason,
    readonly detail: string,
  ) {}
}

/**
 * The same operations over the limiter's JSON API (`/v1/*`), with Node's fetch (undici keeps
 * connections alive). No auto-batching: call batch() to send several acquires at once.
 */
export class RateLimitHttpClient {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly policy: FailurePolicy;
  private readonly headers: Record<string, string>;
  private readonly ids: RequestIdGenerator | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(options: RateLimitHttpClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError('timeoutMs: must be a number > 0');
    this.policy = options.failurePolicy ?? 'closed';
    this.headers = { 'content-type': 'application/json', ...options.headers };
    if (options.requestIds === true) this.ids = new RequestIdGenerator();
  }

  acquire(request: AcquireRequest, options?: CallOptions): Promise<ClientAcquireReply> {
    return this.track(async () => {
      checkCallOptions(options);
      checkAcquire(request);
      const sent = this.withId(request);
      const timeout = acquireTimeoutMs(sent, options?.timeoutMs ?? this.timeoutMs);
      return this.decision(API_ROUTES.acquire, sent, timeout, options?.signal);
    });
  }

  decide(request: AcquireRequest, options?: CallOptions): Promise<ClientAcquireReply> {
    return this.track(async () => {
      checkCallOptions(options);
      checkAcquire(request);
      const timeout = options?.timeoutMs ?? this.timeoutMs;
      return this.decision(API_ROUTES.decide, this.withId(request), timeout, options?.signal);
    });
  }

  release(request: ReleaseRequest, options?: CallOptions): Promise<ReleaseReply> {
    return this.operation<ReleaseReply>(API_ROUTES.release, request, checkRelease, options);
  }

  usage(request: UsageRequest, options?: CallOptions): Promise<UsageReply> {
    return this.operation<UsageReply>(API_ROUTES.usage, request, checkUsage, options);
  }

  stats(request: StatsRequest, options?: CallOptions): Promise<KeyStats> {
    return this.track(async () => {
      checkCallOptions(options);
      checkStats(request);
      const path = API_ROUTES.stats.replace(':key', encodeURIComponent(request.key));
      const query =
        request.quota === undefined
          ? ''
          : `?${STATS_QUERY.quota}=${encodeURIComponent(request.quota)}`;
      const answer = await this.exchange(
        'GET',
        path + query,
        undefined,
        this.timeout(options),
        options,
      );
      if (answer instanceof Unanswered)
        throw unavailableError(answer.reason, undefined, answer.detail);
      return operationResult<KeyStats>(answer);
    });
  }

  batch(requests: readonly AcquireRequest[], options?: CallOptions): Promise<ClientAcquireReply[]> {
    return this.track(async () => {
      checkCallOptions(options);
      checkBatch(requests);
      if (requests.length === 0) return [];
      const sent = requests.map((request) => this.withId(request));
      const answer = await this.exchange(
        'POST',
        API_ROUTES.acquireBatch,
        { requests: sent },
        this.timeout(options),
        options,
      );
      if (answer instanceof Unanswered) {
        return sent.map((request) => policyReply(this.policy, request, answer.reason));
      }
      const replies: unknown = operationResult<BatchReply>(answer).replies;
      // JSON that is no BatchReply (a gateway's own error body): no limiter answered.
      if (!Array.isArray(replies)) {
        return sent.map((request) => policyReply(this.policy, request, 'http'));
      }
      return (replies as AcquireReply[]).map(acquireResult);
    });
  }

  /** Waits for the calls in flight, then refuses new ones. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
  }

  private timeout(options: CallOptions | undefined): number {
    return options?.timeoutMs ?? this.timeoutMs;
  }

  private withId(request: AcquireRequest): AcquireRequest {
    if (this.ids === undefined || request.requestId !== undefined) return request;
    return { ...request, requestId: this.ids.next() };
  }

  private track<T>(run: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ClientClosedError());
    const promise = run();
    this.inFlight.add(promise);
    const forget = (): void => void this.inFlight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  private async decision(
    path: string,
    request: AcquireRequest,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<ClientAcquireReply> {
    const answer = await this.exchange('POST', path, request, timeoutMs, { signal });
    if (answer instanceof Unanswered) return policyReply(this.policy, request, answer.reason);
    // JSON that is no AcquireReply (a gateway's own error body): no limiter answered.
    if (!isDecision(answer)) return policyReply(this.policy, request, 'http');
    return acquireResult(answer);
  }

  private operation<T>(
    path: string,
    request: unknown,
    check: (input: unknown) => void,
    options: CallOptions | undefined,
  ): Promise<T> {
    return this.track(async () => {
      checkCallOptions(options);
      check(request);
      const answer = await this.exchange('POST', path, request, this.timeout(options), options);
      if (answer instanceof Unanswered)
        throw unavailableError(answer.reason, undefined, answer.detail);
      return operationResult<T>(answer);
    });
  }

  /**
   * One HTTP exchange: the reply JSON the limiter answered (whatever its status: the body is the
   * reply), or Unanswered when nothing came back as a reply (network error, timeout, a body that
   * is not the limiter's JSON, e.g. a proxy's 502 page).
   */
  private async exchange(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    timeoutMs: number,
    options: CallOptions | undefined,
  ): Promise<unknown> {
    const timer = AbortSignal.timeout(timerDelayMs(timeoutMs));
    const signal = options?.signal === undefined ? timer : AbortSignal.any([timer, options.signal]);
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.baseUrl + path, {
        method,
        headers: this.headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      text = await response.text();
    } catch (error) {
      if (options?.signal?.aborted === true) throw new RequestAbortedError();
      if (timer.aborted) return new Unanswered('timeout', `no answer within ${timeoutMs} ms`);
      return new Unanswered('http', error instanceof Error ? describe(error) : String(error));
    }
    try {
      const json = JSON.parse(text) as unknown;
      if (typeof json === 'object' && json !== null) return json;
    } catch {
      // not a reply of the limiter's
    }
    return new Unanswered('http', `HTTP ${response.status} without a reply body`);
  }
}

/** The limiter's acquire-shaped replies (its internal-error reply too) all carry these two. */
function isDecision(answer: unknown): answer is AcquireReply {
  const reply = answer as { allowed?: unknown; code?: unknown };
  return typeof reply.allowed === 'boolean' && typeof reply.code === 'string';
}

/** fetch's TypeError hides the reason (ECONNREFUSED...) in `cause`. */
function describe(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}
