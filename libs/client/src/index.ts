/** The client of the ratelimit service (framework-free core): NATS and HTTP. */
export { RateLimitClient } from './nats/rate-limit-client';
export {
  RateLimitHttpClient,
  type RateLimitHttpClientOptions,
} from './http/rate-limit-http-client';
export {
  ClientClosedError,
  InvalidRequestError,
  LimiterUnavailableError,
  RateLimitError,
  RequestAbortedError,
  RequestRefusedError,
  type UnavailableReason,
} from './errors';
export {
  DEFAULT_MAX_BATCH_SIZE,
  DEFAULT_MAX_REPLY_BYTES,
  DEFAULT_TIMEOUT_MS,
  type BatchingOptions,
  type CallOptions,
  type ClientAcquireReply,
  type FailurePolicy,
  type RateLimitClientOptions,
} from './options';
export type { AcquireReply, AcquireRequest } from '@app/contracts/messages/acquire';
export type { BatchReply } from '@app/contracts/messages/batch';
export type { KeyStats, StatsRequest } from '@app/contracts/messages/stats';
export type { ReleaseReply, ReleaseRequest } from '@app/contracts/messages/release';
export type { UsageReply, UsageRequest } from '@app/contracts/messages/usage';
