import { HEADERS, usableCorrelationId, type ParseFailure } from '@app/contracts';
import { ThrottledLog } from '@app/logging';
import { Match, type Msg, type MsgHdrs } from 'nats';
import { rawJson } from './nats-codec';

// Clients cause these at will: a flood of them writes a bounded number of lines.
const refusals = new ThrottledLog('NatsRequests', 'nats.invalid', 'warn');
const failures = new ThrottledLog('NatsResponder', 'nats.error', 'error');
const unsent = new ThrottledLog('NatsResponder', 'nats.reply-failed', 'warn');

/** Where a request's headers are, read only when needed (a NATS Msg is one). */
export interface HeaderSource {
  readonly headers?: MsgHdrs | undefined;
}

/**
 * A NATS request refused for its input (INVALID_REQUEST): the operation, the field, and the
 * correlation id. Admitted and rate-limited requests are never logged.
 */
export function logRefusal(
  operation: string,
  failure: ParseFailure,
  data: Uint8Array,
  source: HeaderSource | undefined,
): void {
  refusals.write(() => ({
    msg: `${operation}: ${failure.reason}`,
    operation,
    field: failure.field,
    // Headers are decoded here, for a line that is written, never for a request that is served.
    correlationId: correlationId(source?.headers, data),
  }));
}

/** A request whose handler failed unexpectedly (answered UNAVAILABLE): a bug, with its stack. */
export function logFailure(msg: Msg, thrown: unknown): void {
  failures.write(() => ({
    msg: `${msg.subject}: ${thrown instanceof Error ? thrown.message : String(thrown)}`,
    subject: msg.subject,
    correlationId: correlationId(msg.headers, msg.data),
    ...(thrown instanceof Error && { err: thrown }),
  }));
}

/** A reply that could not be published (closed or draining connection): the requester times out. */
export function logReplyFailure(msg: Msg, thrown: unknown): void {
  unsent.write(() => ({
    msg: `could not reply on ${msg.subject}: ${thrown instanceof Error ? thrown.message : String(thrown)}`,
    subject: msg.subject,
    correlationId: correlationId(msg.headers, msg.data),
  }));
}

/**
 * NATS has no correlation header of its own: an X-Correlation-ID header when the requester sent
 * one, else the request's own `requestId` (read again, only for a line that is written).
 */
function correlationId(headers: MsgHdrs | undefined, data: Uint8Array): string | undefined {
  const header = usableCorrelationId(headers?.get(HEADERS.correlationId, Match.IgnoreCase));
  if (header !== undefined) return header;
  const raw = rawJson(data);
  const requestId =
    typeof raw === 'object' && raw !== null
      ? (raw as { requestId?: unknown }).requestId
      : undefined;
  return usableCorrelationId(requestId);
}
