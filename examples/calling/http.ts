/**
 * Calling the limiter over HTTP with fetch (Node 18+ or a browser-like runtime): the JSON API
 * under /v1 and GoCC's /rate/:key (docs/contract.md, HTTP).
 */

/** The fields of an AcquireReply used here; a reply carries more (docs/contract.md, Messages). */
export interface AcquireReply {
  readonly allowed: boolean;
  readonly code: string; // OK, RATE_LIMITED, QUEUE_FULL, WAIT_TIMEOUT, INVALID_REQUEST, ...
  readonly requestId: string;
  readonly remaining: number;
  readonly retryAfterMs: number;
  readonly reason?: string;
}

/**
 * POST /v1/acquire: the status is the reply code's (200 OK, 429 refused, 400, 404, 503), the body
 * is always the reply, and the RateLimit-* headers describe the binding limit.
 */
export async function acquireOverHttp(baseUrl: string, key: string, cost = 1) {
  const res = await fetch(`${baseUrl}/v1/acquire`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key, cost }),
    signal: AbortSignal.timeout(2000),
  });
  const reply = (await res.json()) as AcquireReply;
  const headers = {
    limit: res.headers.get('RateLimit-Limit'),
    remaining: res.headers.get('RateLimit-Remaining'),
    reset: res.headers.get('RateLimit-Reset'), // seconds
    retryAfter: res.headers.get('Retry-After'), // seconds, on refusals only
  };
  return { status: res.status, reply, headers };
}

/** POST /v1/acquire/batch: 200 with one reply per entry, in order. */
export async function acquireBatchOverHttp(baseUrl: string, keys: readonly string[]) {
  const res = await fetch(`${baseUrl}/v1/acquire/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ requests: keys.map((key) => ({ key })) }),
    signal: AbortSignal.timeout(2000),
  });
  const { replies } = (await res.json()) as { replies: AcquireReply[] };
  return replies;
}

/** GoCC's API: 200 with the requestId as text when admitted, 429 with an empty body when not. */
export async function acquireGocc(baseUrl: string, key: string) {
  const res = await fetch(`${baseUrl}/rate/${encodeURIComponent(key)}`, {
    method: 'POST',
    signal: AbortSignal.timeout(2000),
  });
  const text = await res.text();
  if (res.status === 200) return { allowed: true, requestId: text };
  if (res.status === 429) return { allowed: false };
  throw new Error(`limiter answered ${res.status}: ${text}`); // 400, 403 or 503, the reason as text
}

/** GoCC's release: DELETE /rate/:key/:requestId answers 200 { "released": true|false }. */
export async function releaseGocc(baseUrl: string, key: string, requestId: string) {
  const path = `/rate/${encodeURIComponent(key)}/${encodeURIComponent(requestId)}`;
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'DELETE',
    signal: AbortSignal.timeout(2000),
  });
  if (res.status !== 200) throw new Error(`limiter answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { released: boolean }).released;
}
