import type { NatsConnection } from 'nats';
import type { AcquireReply } from '@app/contracts/messages/acquire';

/** What the client answers when no limiter does (no responders, timeout, closed connection). */
export type FailurePolicy = 'closed' | 'open' | 'throw';

export interface BatchingOptions {
  /** Most acquires per acquire.batch; at most the contract's 1000. Default 500. */
  readonly maxBatchSize?: number;
}

export interface RateLimitClientOptions {
  /** The caller's connection; the client never closes it. */
  readonly connection: NatsConnection;
  /** Default `ratelimit.v1` (the limiter's NATS_SUBJECT_PREFIX). */
  readonly subjectPrefix?: string;
  /** Per call, default 2000; a waiting acquire waits for its maxWaitMs or deadline on top. */
  readonly timeoutMs?: number;
  /** Default 'closed'. */
  readonly failurePolicy?: FailurePolicy;
  /** Default true: the acquires of one event-loop turn go as one acquire.batch. */
  readonly batching?: boolean | BatchingOptions;
  /** Attach a generated requestId to requests that lack one. Default false (docs/client.md). */
  readonly requestIds?: boolean;
}

export interface CallOptions {
  /** Overrides the client's timeoutMs for this call. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * An AcquireReply of the contract; `policy: true` marks one the client made up because no limiter
 * answered (failurePolicy 'closed' or 'open'). Limiter answers never carry it.
 */
export interface ClientAcquireReply extends AcquireReply {
  readonly policy?: true;
}

export const DEFAULT_TIMEOUT_MS = 2000;
export const DEFAULT_MAX_BATCH_SIZE = 500;
/**
 * The HTTP client reads at most this much of a response body. The largest reply of the contract, a
 * batch of 1 000 AcquireReplies with keys, ids and reasons at their longest, is well under it.
 */
export const DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024;
