import type { AcquireRequest } from '@app/contracts/messages/acquire';
import type { KeyStats, StatsRequest } from '@app/contracts/messages/stats';
import type { ReleaseReply, ReleaseRequest } from '@app/contracts/messages/release';
import type { UsageReply, UsageRequest } from '@app/contracts/messages/usage';
import { API_ROUTES, STATS_QUERY } from '@app/contracts/routes';
import { notJson } from '../codec';
import { ClientClosedError, RequestAbortedError } from '../errors';
import { RELEASE, STATS, USAGE, type Operation } from '../operations';
import {
  DEFAULT_MAX_REPLY_BYTES,
  DEFAULT_TIMEOUT_MS,
  type CallOptions,
  type ClientAcquireReply,
  type FailurePolicy,
} from '../options';
import { policyReply, replyOrPolicy, replyOrThrow } from '../policy-reply';
import { acquireResult, batchReplies, decisionReply, operationReply } from '../replies';
import { RequestIdGenerator } from '../request-ids';
import { acquireTimeoutMs, checkCallOptions, timerDelayMs } from '../timeouts';
import { invalidReply, Unanswered } from '../unanswered';
import { activeTraceHeaders, TRACEPARENT, TRACESTATE, type TraceHeaders } from '../trace-context';
import { checkAcquire, checkBatch } from '../validate';
import { readCappedBody } from './capped-body';

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
  /**
   * The most bytes of a response body read (default 4 MiB); a longer body is not read further and
   * counts as no limiter reply (`invalid-reply`).
   */
  readonly maxReplyBytes?: number;
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
  private readonly maxReplyBytes: number;
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(options: RateLimitHttpClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError('timeoutMs: must be a number > 0');
    this.policy = options.failurePolicy ?? 'closed';
    this.headers = { 'content-type': 'application/json', ...options.headers };
    this.maxReplyBytes = options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    if (!Number.isInteger(this.maxReplyBytes) || this.maxReplyBytes < 1) {
      throw new RangeError('maxReplyBytes: must be an integer > 0');
    }
    if (options.requestIds === true) this.ids = new RequestIdGenerator();
  }

  acquire(request: AcquireRequest, options?: CallOptions): Promise<ClientAcquireReply> {
    return this.track(async () => {
      checkCallOptions(options);
      checkAcquire(request);
      const sent = this.withId(request);
      const timeout = acquireTimeoutMs(sent, options?.timeoutMs ?? this.timeoutMs);
      // Inside an active OpenTelemetry span: its traceparent, so the limiter's span is its child.
      const trace = activeTraceHeaders();
      return this.decision(API_ROUTES.acquire, sent, timeout, options?.signal, trace);
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
    return this.operation(API_ROUTES.release, request, RELEASE, options);
  }

  usage(request: UsageRequest, options?: CallOptions): Promise<UsageReply> {
    return this.operation(API_ROUTES.usage, request, USAGE, options);
  }

  stats(request: StatsRequest, options?: CallOptions): Promise<KeyStats> {
    return this.track(async () => {
      checkCallOptions(options);
      STATS.check(request);
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
      return replyOrThrow(operationReply(answer, STATS.parseReply));
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
      const replies = batchReplies(answer, sent);
      if (replies instanceof Unanswered) {
        return sent.map((request) =>
          policyReply(this.policy, request, replies.reason, replies.detail),
        );
      }
      return replies.map(acquireResult);
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
    trace?: TraceHeaders,
  ): Promise<ClientAcquireReply> {
    const answer = await this.exchange('POST', path, request, timeoutMs, { signal }, trace);
    return replyOrPolicy(decisionReply(answer, request), this.policy, request);
  }

  private operation<T>(
    path: string,
    request: unknown,
    operation: Operation<T>,
    options: CallOptions | undefined,
  ): Promise<T> {
    return this.track(async () => {
      checkCallOptions(options);
      operation.check(request);
      const answer = await this.exchange('POST', path, request, this.timeout(options), options);
      return replyOrThrow(operationReply(answer, operation.parseReply));
    });
  }

  /**
   * One HTTP exchange: the body's JSON, whatever the status (the body is the reply), or Unanswered
   * when nothing came back as JSON: a network error, the timeout, a body over maxReplyBytes (not
   * read further) or one that is not JSON (a proxy's 502 page). The caller checks its shape.
   */
  private async exchange(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    timeoutMs: number,
    options: CallOptions | undefined,
    trace?: TraceHeaders,
  ): Promise<unknown> {
    const timer = AbortSignal.timeout(timerDelayMs(timeoutMs));
    const signal = options?.signal === undefined ? timer : AbortSignal.any([timer, options.signal]);
    let response: Response;
    let text: string | undefined;
    try {
      response = await fetch(this.baseUrl + path, {
        method,
        headers: trace === undefined ? this.headers : withTrace(this.headers, trace),
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      text = await readCappedBody(response, this.maxReplyBytes);
    } catch (error) {
      if (options?.signal?.aborted === true) throw new RequestAbortedError();
      if (timer.aborted) return new Unanswered('timeout', `no answer within ${timeoutMs} ms`);
      return new Unanswered('http', error instanceof Error ? describe(error) : String(error));
    }
    if (text === undefined) {
      return invalidReply(
        `HTTP ${response.status}: body: is longer than maxReplyBytes (${this.maxReplyBytes} bytes)`,
      );
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      return notJson(error, `HTTP ${response.status}: `);
    }
  }
}

function withTrace(headers: Record<string, string>, trace: TraceHeaders): Record<string, string> {
  const traced: Record<string, string> = { ...headers, [TRACEPARENT]: trace.traceparent };
  if (trace.tracestate !== undefined) traced[TRACESTATE] = trace.tracestate;
  return traced;
}

/** fetch's TypeError hides the reason (ECONNREFUSED...) in `cause`. */
function describe(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}
