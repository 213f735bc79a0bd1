import { HEADERS } from './routes';

/**
 * Which rate-limit headers an answer carries (docs/contract.md, Headers): `legacy`, today's
 * `RateLimit-Limit/Remaining/Reset` and `X-RateLimit-*`; `draft`, the structured `RateLimit-Policy`
 * and `RateLimit` of draft-ietf-httpapi-ratelimit-headers-10 instead; `both`, all of them.
 */
export const RATE_LIMIT_HEADER_MODES = ['legacy', 'both', 'draft'] as const;
export type RateLimitHeaderMode = (typeof RATE_LIMIT_HEADER_MODES)[number];
export const DEFAULT_RATE_LIMIT_HEADER_MODE: RateLimitHeaderMode = 'legacy';

export function isRateLimitHeaderMode(value: unknown): value is RateLimitHeaderMode {
  return (RATE_LIMIT_HEADER_MODES as readonly unknown[]).includes(value);
}

/** The parts of an AcquireReply that the rate-limit headers describe. */
export interface HeaderSource {
  readonly allowed: boolean;
  /** Size of the binding limit: the draft's `q`. */
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
  readonly retryAfterMs: number;
  /** The binding limit's name: the draft's policy name. Empty or absent: no draft fields. */
  readonly limitName?: string;
}

/** What a reply does not say about its limits, when the caller knows them (a quota's limits). */
export interface HeaderLimitShape {
  readonly name: string;
  readonly windowMs: number;
}

/** Whole seconds, rounded up, never negative (docs/contract.md, Headers). */
export function secondsRoundedUp(ms: number): number {
  return ms > 0 ? Math.ceil(ms / 1000) : 0;
}

/**
 * Headers for `/rate/*` and `/v1/acquire` (and the NestJS guard), admitted or not, as a flat name,
 * value, name, value list (the form Node's `writeHead` takes without building an object). Refused
 * replies also carry `Retry-After` of at least 1 s: a 0 would invite an immediate retry storm.
 * `limits` are the limits of the reply's quota: the one the reply names (its binding limit) gives
 * the draft's `w`; without it `w` is left out.
 */
export function rateLimitHeaderList(
  reply: HeaderSource,
  mode: RateLimitHeaderMode = DEFAULT_RATE_LIMIT_HEADER_MODE,
  limits?: readonly HeaderLimitShape[],
): string[] {
  const remaining = Math.max(0, reply.remaining);
  const reset = secondsRoundedUp(reply.resetMs);
  const list: string[] = [];
  if (mode !== 'draft') {
    const limit = String(reply.limit);
    list.push(
      HEADERS.rateLimitLimit,
      limit,
      HEADERS.rateLimitRemaining,
      String(remaining),
      HEADERS.rateLimitReset,
      String(reset),
      HEADERS.xRateLimitLimit,
      limit,
      HEADERS.xRateLimitRemaining,
      String(remaining),
      HEADERS.xRateLimitReset,
      String(reset),
    );
  }
  if (mode !== 'legacy') {
    const limitName = reply.limitName ?? '';
    const name = sfString(limitName);
    if (name !== undefined) {
      const named = limits?.find((l) => l.name === limitName);
      const window = named === undefined ? undefined : wholeSeconds(named.windowMs);
      const w = window === undefined ? '' : `;w=${sfInteger(window)}`;
      list.push(
        HEADERS.rateLimitPolicy,
        `${name};q=${sfInteger(reply.limit)}${w}`,
        HEADERS.rateLimit,
        `${name};r=${sfInteger(remaining)};t=${sfInteger(reset)}`,
      );
    }
  }
  if (!reply.allowed) {
    const retryAfter = String(Math.max(1, secondsRoundedUp(reply.retryAfterMs)));
    list.push(HEADERS.retryAfter, retryAfter);
    if (mode !== 'draft') list.push(HEADERS.xRateLimitRetryAfter, retryAfter);
  }
  return list;
}

/** The same headers as an object. */
export function rateLimitHeaders(
  reply: HeaderSource,
  mode: RateLimitHeaderMode = DEFAULT_RATE_LIMIT_HEADER_MODE,
  limits?: readonly HeaderLimitShape[],
): Record<string, string> {
  const list = rateLimitHeaderList(reply, mode, limits);
  const headers: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) headers[list[i]!] = list[i + 1]!;
  return headers;
}

/** RFC 9651's largest Integer: 15 digits. */
const SF_INTEGER_MAX = 999_999_999_999_999;

/** A non-negative Structured Field Integer: whole, clamped to what the syntax can carry. */
function sfInteger(n: number): string {
  return String(Math.min(SF_INTEGER_MAX, Math.max(0, Math.floor(n))));
}

/**
 * A Structured Field String (RFC 9651, 3.3.3): quoted, `\` and `"` escaped. Undefined when empty
 * or when it holds a character a String cannot (outside printable ASCII): such a name is no policy
 * a client could match, so the draft fields are left out rather than carry another name.
 */
export function sfString(text: string): string | undefined {
  if (text === '' || !/^[\x20-\x7e]*$/.test(text)) return undefined;
  return `"${text.replace(/[\\"]/g, '\\$&')}"`;
}

/** The draft's `w`: a window of whole seconds, at least 1; undefined for one it cannot say. */
function wholeSeconds(ms: number): number | undefined {
  return Number.isSafeInteger(ms) && ms >= 1000 && ms % 1000 === 0 ? ms / 1000 : undefined;
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
