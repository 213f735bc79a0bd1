import type { AcquireReply, AcquireRequest } from '@app/contracts/messages/acquire';
import type { ErrorReply } from '@app/contracts/messages/error-reply';
import type { ParseFailure, ParseResult } from '@app/contracts/validation/parse-result';
import type { ReplyCode } from '@app/contracts/codes';
import {
  parseAcquireReply,
  parseBatchReply,
  parseErrorReply,
} from '@app/contracts/validation/parse-reply';
import { InvalidRequestError, RequestRefusedError } from './errors';
import { invalidReply, Unanswered } from './unanswered';

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

/**
 * A refusal of the whole request (`ok: false`), checked; undefined when `json` says it is none.
 * The limiter sends one for release, usage and stats, and for any request it could not serve (an
 * internal error, its shutdown deadline).
 */
function errorReplyIn(json: unknown): ParseResult<ErrorReply> | undefined {
  if (typeof json !== 'object' || json === null || (json as { ok?: unknown }).ok !== false) {
    return undefined;
  }
  return parseErrorReply(json);
}

/** What came back is no reply a limiter sends: the rule it breaks, for the caller to see. */
function notAReply(failure: ParseFailure): Unanswered {
  return invalidReply(failure.reason);
}

/** The caller's answer to an ErrorReply for an acquire-like request: refusals are answers. */
function refusalFor(reply: ErrorReply, request: AcquireRequest): AcquireReply {
  if (reply.code === 'INVALID_REQUEST')
    invalidError(reply.field ?? fieldOfReason(reply.reason), reply.reason);
  return undecidedReply(request, reply.code, reply.reason);
}

/**
 * The reply to an acquire or decide sent alone, as its caller gets it; Unanswered when it is no
 * limiter's reply (the failure policy answers then). `json` is the decoded reply, or the
 * Unanswered of one that was not JSON.
 */
export function decisionReply(json: unknown, request: AcquireRequest): AcquireReply | Unanswered {
  if (json instanceof Unanswered) return json;
  const error = errorReplyIn(json);
  if (error !== undefined) return error.ok ? refusalFor(error.value, request) : notAReply(error);
  const reply = parseAcquireReply(json);
  return reply.ok ? acquireResult(reply.value) : notAReply(reply);
}

/**
 * The replies to an acquire.batch of `requests`, one per request in order (each still to be
 * mapped for its caller), or Unanswered when the message is no limiter's reply: not a BatchReply
 * of exactly that many coherent entries, nor an ErrorReply. A refusal of the whole batch other
 * than INVALID_REQUEST (which throws) becomes each caller's own refusal.
 */
export function batchReplies(
  json: unknown,
  requests: readonly AcquireRequest[],
): readonly AcquireReply[] | Unanswered {
  if (json instanceof Unanswered) return json;
  const error = errorReplyIn(json);
  if (error !== undefined) {
    if (!error.ok) return notAReply(error);
    return requests.map((request) => refusalFor(error.value, request));
  }
  const batch = parseBatchReply(json, requests.length);
  return batch.ok ? batch.value.replies : notAReply(batch);
}

/**
 * A release, usage or stats reply, checked by `parse`; an ErrorReply becomes the error it
 * describes; Unanswered when it is no limiter's reply.
 */
export function operationReply<T>(
  json: unknown,
  parse: (value: unknown) => ParseResult<T>,
): T | Unanswered {
  if (json instanceof Unanswered) return json;
  const error = errorReplyIn(json);
  if (error !== undefined) {
    if (!error.ok) return notAReply(error);
    const refused = error.value;
    if (refused.code === 'INVALID_REQUEST') {
      invalidError(refused.field ?? fieldOfReason(refused.reason), refused.reason);
    }
    throw new RequestRefusedError(refused.code, refused.reason, refused.field);
  }
  const reply = parse(json);
  return reply.ok ? reply.value : notAReply(reply);
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
