import type { AcquireRequest } from '@app/contracts/messages/acquire';
import type { KeyStats, StatsRequest } from '@app/contracts/messages/stats';
import type { NatsSubjects } from '@app/contracts/subjects';
import type { ReleaseReply, ReleaseRequest } from '@app/contracts/messages/release';
import type { UsageReply, UsageRequest } from '@app/contracts/messages/usage';
import { MAX_BATCH_ENTRIES } from '@app/contracts/messages/limits';
import { DEFAULT_NATS_SUBJECT_PREFIX, natsSubjects } from '@app/contracts/subjects';
import { encodeJson, encodeText } from '../codec';
import { ClientClosedError } from '../errors';
import {
  DEFAULT_MAX_BATCH_SIZE,
  DEFAULT_TIMEOUT_MS,
  type CallOptions,
  type ClientAcquireReply,
  type FailurePolicy,
  type RateLimitClientOptions,
} from '../options';
import { PendingCall } from '../pending-call';
import { RequestIdGenerator } from '../request-ids';
import { acquireTimeoutMs, checkCallOptions } from '../timeouts';
import { RELEASE, STATS, USAGE, type Operation } from '../operations';
import { activeTraceHeaders, type TraceHeaders } from '../trace-context';
import { checkAcquire, checkBatch } from '../validate';
import { AcquireBatcher } from './acquire-batcher';
import { ReplyMux, type ReplyWaiter } from './reply-mux';
import { BatchWaiter, DecisionWaiter, OperationWaiter } from './waiters';

function maxBatchSizeOf(batching: RateLimitClientOptions['batching']): number {
  const size = typeof batching === 'object' ? (batching.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE) : 0;
  if (!Number.isInteger(size) || size < 2 || size > MAX_BATCH_ENTRIES) {
    throw new RangeError(
      `batching.maxBatchSize: must be an integer from 2 to ${MAX_BATCH_ENTRIES}`,
    );
  }
  return size;
}

/**
 * The limiter's operations over NATS request-reply (docs/client.md). Acquires of one event-loop
 * turn go out as one acquire.batch; every reply comes back on one muxed inbox subscription.
 */
export class RateLimitClient {
  private readonly subjects: NatsSubjects;
  private readonly timeoutMs: number;
  private readonly policy: FailurePolicy;
  private readonly mux: ReplyMux;
  private readonly batcher: AcquireBatcher | undefined;
  private readonly ids: RequestIdGenerator | undefined;
  private closed = false;
  private readonly cancelAlone = (call: { readonly token: string }): void =>
    this.mux.cancel(call.token);

  constructor(options: RateLimitClientOptions) {
    this.subjects = natsSubjects(options.subjectPrefix ?? DEFAULT_NATS_SUBJECT_PREFIX);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError('timeoutMs: must be a number > 0');
    this.policy = options.failurePolicy ?? 'closed';
    this.mux = new ReplyMux(options.connection);
    const batching = options.batching ?? true;
    if (batching !== false) {
      const max = maxBatchSizeOf(batching === true ? {} : batching);
      this.batcher = new AcquireBatcher((calls, requests) => this.sendBatch(calls, requests), max);
    }
    if (options.requestIds === true) this.ids = new RequestIdGenerator();
  }

  /**
   * Acquires capacity. Batched with the other acquires of this turn unless it may wait (batch
   * entries cannot), has its own timeoutMs, or is made inside an active OpenTelemetry span: then
   * it goes alone, with the span's `traceparent` header, and the limiter's span is its child.
   */
  acquire(request: AcquireRequest, options?: CallOptions): Promise<ClientAcquireReply> {
    const refused = this.refuse(request, checkAcquire, options);
    if (refused !== undefined) return refused;
    const sent = this.withId(request);
    const trace = activeTraceHeaders();
    if (
      trace === undefined &&
      this.batcher !== undefined &&
      sent.wait !== true &&
      options?.timeoutMs === undefined
    ) {
      const call = new PendingCall<ClientAcquireReply>(options?.signal);
      if (!call.settled) this.batcher.add(call, sent);
      return call.promise;
    }
    const timeout = acquireTimeoutMs(sent, options?.timeoutMs ?? this.timeoutMs);
    return this.decision(this.subjects.acquire, sent, timeout, options?.signal, trace);
  }

  /** Answers as acquire would, charging nothing; never batched (acquire.batch only acquires). */
  decide(request: AcquireRequest, options?: CallOptions): Promise<ClientAcquireReply> {
    const refused = this.refuse(request, checkAcquire, options);
    if (refused !== undefined) return refused;
    const timeout = options?.timeoutMs ?? this.timeoutMs;
    return this.decision(this.subjects.decide, this.withId(request), timeout, options?.signal);
  }

  release(request: ReleaseRequest, options?: CallOptions): Promise<ReleaseReply> {
    return this.operation(this.subjects.release, request, RELEASE, options);
  }

  usage(request: UsageRequest, options?: CallOptions): Promise<UsageReply> {
    return this.operation(this.subjects.usage, request, USAGE, options);
  }

  stats(request: StatsRequest, options?: CallOptions): Promise<KeyStats> {
    return this.operation(this.subjects.stats, request, STATS, options);
  }

  /** One acquire.batch of these requests as given (at most 1000, none waiting), in order. */
  batch(requests: readonly AcquireRequest[], options?: CallOptions): Promise<ClientAcquireReply[]> {
    const refused = this.refuse(requests, checkBatch, options);
    if (refused !== undefined) return refused;
    if (requests.length === 0) return Promise.resolve([]);
    const outer = new PendingCall<ClientAcquireReply[]>(options?.signal, this.cancelAlone);
    // Aborted before it was sent: nothing goes out, nothing is charged (as for the other calls).
    if (outer.settled) return outer.promise;
    const sent = requests.map((request) => this.withId(request));
    const calls = sent.map(() => new PendingCall<ClientAcquireReply>());
    const all = Promise.all(calls.map((call) => call.promise));
    all.then(
      (replies) => outer.succeed(replies),
      (error: unknown) => outer.fail(error),
    );
    const payload = encodeText(`{"requests":[${sent.map((r) => JSON.stringify(r)).join(',')}]}`);
    const waiter = new BatchWaiter(calls, sent, this.policy);
    outer.token = this.send(this.subjects.acquireBatch, payload, waiter, options?.timeoutMs);
    return outer.promise;
  }

  /** Sends what is queued, waits for the answers in flight, then refuses new calls. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.batcher?.flush();
    }
    await this.mux.idle();
    this.mux.unsubscribe();
  }

  private refuse<I>(
    input: I,
    check: (input: I) => void,
    options: CallOptions | undefined,
  ): Promise<never> | undefined {
    if (this.closed) return Promise.reject(new ClientClosedError());
    try {
      checkCallOptions(options);
      check(input);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return undefined;
  }

  private withId(request: AcquireRequest): AcquireRequest {
    if (this.ids === undefined || request.requestId !== undefined) return request;
    return { ...request, requestId: this.ids.next() };
  }

  private decision(
    subject: string,
    request: AcquireRequest,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    trace?: TraceHeaders,
  ): Promise<ClientAcquireReply> {
    const call = new PendingCall<ClientAcquireReply>(signal, this.cancelAlone);
    if (call.settled) return call.promise;
    const waiter = new DecisionWaiter(call, request, this.policy);
    call.token = this.mux.request(subject, encodeJson(request), waiter, timeoutMs, trace);
    return call.promise;
  }

  private operation<T>(
    subject: string,
    request: unknown,
    operation: Operation<T>,
    options: CallOptions | undefined,
  ): Promise<T> {
    const refused = this.refuse<unknown>(request, operation.check, options);
    if (refused !== undefined) return refused;
    const call = new PendingCall<T>(options?.signal, this.cancelAlone);
    if (call.settled) return call.promise;
    const waiter = new OperationWaiter<T>(call, operation.parseReply);
    call.token = this.send(subject, encodeJson(request), waiter, options?.timeoutMs);
    return call.promise;
  }

  private send(
    subject: string,
    payload: Uint8Array,
    waiter: ReplyWaiter,
    timeoutMs: number | undefined,
  ): string {
    return this.mux.request(subject, payload, waiter, timeoutMs ?? this.timeoutMs);
  }

  /** The batcher's sender: callers that left (aborted) before the flush are not sent. */
  private sendBatch(
    queued: PendingCall<ClientAcquireReply>[],
    queuedRequests: AcquireRequest[],
  ): void {
    let calls = queued;
    let requests = queuedRequests;
    if (queued.some((call) => call.settled)) {
      calls = queued.filter((call) => !call.settled);
      requests = queuedRequests.filter((_, i) => !queued[i]!.settled);
    }
    if (calls.length === 0) return;
    if (calls.length === 1) {
      const call = calls[0]!;
      const waiter = new DecisionWaiter(call, requests[0]!, this.policy);
      call.token = this.send(this.subjects.acquire, encodeJson(requests[0]), waiter, undefined);
      return;
    }
    let payload = '{"requests":[';
    for (let i = 0; i < requests.length; i++) {
      payload += i === 0 ? JSON.stringify(requests[i]) : `,${JSON.stringify(requests[i])}`;
    }
    payload += ']}';
    this.send(
      this.subjects.acquireBatch,
      encodeText(payload),
      new BatchWaiter(calls, requests, this.policy),
      undefined,
    );
  }
}
