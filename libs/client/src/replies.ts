import type { AcquireReply, AcquireRequest, ErrorReply, ReplyCode } from '@app/contracts';
import { InvalidRequestError, RequestRefusedError } from './errors';

/** The field an INVALID_REQUEST reason names first (`cost.tokens: must be ...` → `cost.tokens`). */
export function fieldOfReason(reason: string): string {
  const colon = reason.indexOf(': ');
  return colon > 0 ? reason.slice(0, colon) : 'body';
}

/** An acquire-like reply as the caller sees it: INVALID_REQUEST becomes InvalidRequestError. */
export function acquireResult(reply: AcquireReply): AcquireReply {
  if (reply.code !== 'INVALID_REQUEST') return reply;
  const reason = reply.reason ?? 'body: refused by the limiter';
  return invalidError(fieldOfReason(reason), reason);
}

function invalidError(field: string, reason: string): never {
  throw new InvalidRequestError(field, reason);
}

function isErrorReply(reply: unknown): reply is ErrorReply {
  return (reply as { ok?: unknown }).ok === false;
}

/**
 * A refusal of a whole acquire.batch other than INVALID_REQUEST (the limiter's shutdown deadline,
 * an internal error), as each auto-batched caller's own reply: acquire-like calls resolve the
 * limiter's refusals, they never throw them. Undefined when `reply` is no such refusal.
 */
export function batchRefusalFor(reply: unknown, request: AcquireRequest): AcquireReply | undefined {
  if (!isErrorReply(reply) || reply.code === 'INVALID_REQUEST') return undefined;
  return undecidedReply(request, reply.code, reply.reason);
}

/** A release, usage or stats reply: an ErrorReply becomes the error it describes. */
export function operationResult<T>(reply: unknown): T {
  if (!isErrorReply(reply)) return reply as T;
  if (reply.code === 'INVALID_REQUEST') {
    invalidError(reply.field ?? fieldOfReason(reply.reason), reply.reason);
  }
  throw new RequestRefusedError(reply.code, reply.reason, reply.field);
}

/**
 * An entry of an auto-batched acquire, refused by the limiter as `requests[i].<field>`: named as
 * the caller sent it, a single acquire.
 */
export function unnestBatchReason(reply: AcquireReply, index: number): AcquireReply {
  const reason = reply.reason;
  const prefix = `requests[${index}]`;
  if (reply.code !== 'INVALID_REQUEST' || reason === undefined || !reason.startsWith(prefix)) {
    return reply;
  }
  const rest = reason.slice(prefix.length);
  return { ...reply, reason: rest.startsWith('.') ? rest.slice(1) : `body${rest}` };
}

/**
 * A reply no limit decided (no limiter answered, or it refused the request as a whole): the
 * request's key, quota and id, zero figures, `allowed` only for an admitting OK.
 */
export function undecidedReply(
  request: Pick<AcquireRequest, 'key' | 'quota' | 'requestId'>,
  code: ReplyCode,
  reason: string | undefined,
): AcquireReply {
  const reply: AcquireReply = {
    allowed: code === 'OK',
    code,
    requestId: request.requestId ?? '',
    key: request.key,
    quota: request.quota ?? '',
    limit: 0,
    remaining: 0,
    resetMs: 0,
    retryAfterMs: 0,
    waitedMs: 0,
    limitName: '',
    shadow: false,
  };
  if (reason !== undefined) reply.reason = reason;
  return reply;
}
