import { HEADERS } from './routes';

/** The parts of an AcquireReply that the rate-limit headers describe. */
export interface HeaderSource {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
  readonly retryAfterMs: number;
}

/** Whole seconds, rounded up, never negative (docs/contract.md, Headers). */
export function secondsRoundedUp(ms: number): number {
  return ms > 0 ? Math.ceil(ms / 1000) : 0;
}

/**
 * Headers for `/rate/*` and `/v1/acquire`, admitted or not, as a flat name, value, name, value
 * list (the form Node's `writeHead` takes without building an object). Refused replies also carry
 * `Retry-After` of at least 1 s: a 0 would invite an immediate retry storm.
 */
export function rateLimitHeaderList(reply: HeaderSource): string[] {
  const limit = String(reply.limit);
  const remaining = String(Math.max(0, reply.remaining));
  const reset = String(secondsRoundedUp(reply.resetMs));
  const list = [
    HEADERS.rateLimitLimit,
    limit,
    HEADERS.rateLimitRemaining,
    remaining,
    HEADERS.rateLimitReset,
    reset,
    HEADERS.xRateLimitLimit,
    limit,
    HEADERS.xRateLimitRemaining,
    remaining,
    HEADERS.xRateLimitReset,
    reset,
  ];
  if (!reply.allowed) {
    const retryAfter = String(Math.max(1, secondsRoundedUp(reply.retryAfterMs)));
    list.push(HEADERS.retryAfter, retryAfter, HEADERS.xRateLimitRetryAfter, retryAfter);
  }
  return list;
}

/** The same headers as an object. */
export function rateLimitHeaders(reply: HeaderSource): Record<string, string> {
  const list = rateLimitHeaderList(reply);
  const headers: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) headers[list[i]!] = list[i + 1]!;
  return headers;
}

/** 1..128 printable ASCII: a correlation id that may be echoed or logged as it is. */
const CORRELATION_ID = /^[\x21-\x7e][\x20-\x7e]{0,127}$/;

/**
 * A client's X-Correlation-ID (or NATS request id) when it can be echoed and logged as it is;
 * undefined otherwise (absent, too long, odd bytes), so neither a reply nor a log line carries
 * what a client should not put there.
 */
export function usableCorrelationId(value: unknown): string | undefined {
  return typeof value === 'string' && CORRELATION_ID.test(value) ? value : undefined;
}
