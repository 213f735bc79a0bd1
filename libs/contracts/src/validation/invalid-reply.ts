import type { AcquireReply } from '../messages/acquire';
import type { ErrorReply } from '../messages/error-reply';
import { isQuotaName, isRequestId, MAX_KEY_BYTES } from '../messages/limits';
import type { ParseFailure } from './parse-result';

function field(raw: unknown, name: string): unknown {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw)
    ? (raw as Record<string, unknown>)[name]
    : undefined;
}

/** Echoes a field of the refused input only if it is safe to send back; otherwise ''. */
function echo(value: unknown, isSafe: (text: string) => boolean): string {
  return typeof value === 'string' && isSafe(value) ? value : '';
}

/**
 * The AcquireReply for input that failed validation (acquire, decide, batch entries): nothing is
 * charged, and the key, quota and requestId are echoed when they were usable, so a client can
 * match the reply. The transport may fill in a generated requestId.
 */
export function invalidAcquireReply(failure: ParseFailure, raw: unknown): AcquireReply {
  return {
    allowed: false,
    code: 'INVALID_REQUEST',
    requestId: echo(field(raw, 'requestId'), isRequestId),
    key: echo(field(raw, 'key'), (text) => text.length <= MAX_KEY_BYTES),
    quota: echo(field(raw, 'quota'), isQuotaName),
    limit: 0,
    remaining: 0,
    resetMs: 0,
    retryAfterMs: 0,
    waitedMs: 0,
    limitName: '',
    shadow: false,
    reason: failure.reason,
  };
}

/** The reply to a release, usage or stats request that failed validation. */
export function invalidRequestReply(failure: ParseFailure): ErrorReply {
  return {
    ok: false,
    allowed: false,
    code: 'INVALID_REQUEST',
    reason: failure.reason,
    field: failure.field,
  };
}
