/** Every error the client throws; all extend RateLimitError and carry a stable `code`. */

/**
 * Why no limiter answered: nobody subscribes (NATS), no answer in time, the NATS connection closed,
 * the HTTP exchange failed, or what came back is no reply of the contract's (`invalid-reply`).
 */
export type UnavailableReason =
  'no-responders' | 'timeout' | 'connection-closed' | 'http' | 'invalid-reply';

export class RateLimitError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * No limiter answered (failurePolicy 'throw' only; the other policies answer for it). `requestId`
 * is the id the request was sent with, if any: retry with it to be charged at most once.
 */
export class LimiterUnavailableError extends RateLimitError {
  constructor(
    readonly reason: UnavailableReason,
    message: string,
    readonly requestId?: string,
  ) {
    super('UNAVAILABLE', message);
  }
}

/** The client refused the input before sending, or the limiter answered INVALID_REQUEST. */
export class InvalidRequestError extends RateLimitError {
  constructor(
    /** Dotted path of the bad field (`cost.tokens`, `requests[3].key`), or `body`. */
    readonly field: string,
    /** `<field>: <rule>`, as the limiter words it. */
    readonly reason: string,
  ) {
    super('INVALID_REQUEST', reason);
  }
}

/**
 * The limiter answered a release, usage or stats request with an ErrorReply other than
 * INVALID_REQUEST (UNKNOWN_QUOTA, UNAVAILABLE while draining...). Acquire-like calls never throw
 * it: their refusals are AcquireReplies.
 */
export class RequestRefusedError extends RateLimitError {
  constructor(
    code: string,
    readonly reason: string,
    readonly field?: string,
  ) {
    super(code, reason);
  }
}

export class ClientClosedError extends RateLimitError {
  constructor() {
    super('CLIENT_CLOSED', 'the rate-limit client is closed');
  }
}

/** The caller's AbortSignal fired before an answer came; the limiter may still have charged. */
export class RequestAbortedError extends RateLimitError {
  constructor() {
    super('ABORTED', 'the call was aborted by its signal');
  }
}
