/**
 * Calling the limiter over NATS with nats.js and plain JSON, nothing else: the subjects and
 * messages of docs/contract.md. In a service, connect once and keep the connection; each function
 * here connects for itself only so that it can be copied alone.
 */
import { connect, ErrorCode, NatsError, type NatsConnection } from 'nats';

/** The fields of an AcquireReply used here; a reply carries more (docs/contract.md, Messages). */
export interface AcquireReply {
  readonly allowed: boolean;
  readonly code: string; // OK, RATE_LIMITED, QUEUE_FULL, WAIT_TIMEOUT, INVALID_REQUEST, ...
  readonly requestId: string;
  readonly limit: number;
  readonly remaining: number;
  readonly retryAfterMs: number;
  readonly waitedMs: number;
  readonly reason?: string;
}

/** No limiter answered: none subscribed (no responders), or none in time (timeout). */
export class LimiterUnavailable extends Error {
  constructor(readonly why: 'no-responders' | 'timeout') {
    super(`no limiter answered (${why})`);
  }
}

/** The errors of nats.js that mean no limiter answered. */
const unanswered: Partial<Record<string, LimiterUnavailable['why']>> = {
  [ErrorCode.NoResponders]: 'no-responders',
  [ErrorCode.Timeout]: 'timeout',
};

/** One request, one reply. The limiters share a queue group, so exactly one of them answers. */
async function ask<T>(nc: NatsConnection, subject: string, body: unknown, timeoutMs = 2000) {
  try {
    const msg = await nc.request(subject, JSON.stringify(body), { timeout: timeoutMs });
    return msg.json<T>();
  } catch (err) {
    const why = err instanceof NatsError ? unanswered[err.code] : undefined;
    throw why !== undefined ? new LimiterUnavailable(why) : err;
  }
}

async function withNats<T>(natsUrl: string, use: (nc: NatsConnection) => Promise<T>) {
  const nc = await connect({ servers: natsUrl });
  try {
    return await use(nc);
  } finally {
    await nc.close();
  }
}

/** May `key` spend `cost` now? Refused at once when not (`retryAfterMs` says when to retry). */
export function acquire(natsUrl: string, prefix: string, key: string, cost = 1) {
  return withNats(natsUrl, (nc) => ask<AcquireReply>(nc, `${prefix}.acquire`, { key, cost }));
}

/** Several acquires in one message: one reply per entry, in order, each decided on its own. */
export function acquireBatch(natsUrl: string, prefix: string, keys: readonly string[]) {
  const requests = keys.map((key) => ({ key }));
  return withNats(natsUrl, async (nc) => {
    const batch = await ask<{ replies: AcquireReply[] }>(nc, `${prefix}.acquire.batch`, {
      requests,
    });
    return batch.replies;
  });
}

/**
 * Waits in the key's queue (if its quota has one) for at most `maxWaitMs`, and never past the
 * deadline; NATS must wait longer than that for the reply.
 */
export function acquireWaiting(natsUrl: string, prefix: string, key: string, maxWaitMs: number) {
  const request = { key, wait: true, maxWaitMs, deadline: Date.now() + maxWaitMs };
  return withNats(natsUrl, (nc) =>
    ask<AcquireReply>(nc, `${prefix}.acquire`, request, maxWaitMs + 2000),
  );
}

/**
 * A retry with the same requestId gets the first answer again and is charged once, so a request
 * whose reply was lost can be sent again safely (within 60 s).
 */
export function acquireWithRetry(natsUrl: string, prefix: string, key: string, requestId: string) {
  return withNats(natsUrl, async (nc) => {
    const first = await ask<AcquireReply>(nc, `${prefix}.acquire`, { key, requestId });
    const retry = await ask<AcquireReply>(nc, `${prefix}.acquire`, { key, requestId });
    return [first, retry];
  });
}

/** Acquires, does the work, then gives the request back (frees its lease, or its cost). */
export function acquireThenRelease(natsUrl: string, prefix: string, key: string) {
  return withNats(natsUrl, async (nc) => {
    const reply = await ask<AcquireReply>(nc, `${prefix}.acquire`, { key });
    if (!reply.allowed) return { reply, released: false };
    // ... the work the request was for ...
    const release = { key, requestId: reply.requestId };
    // A ReleaseReply, or an ErrorReply ({ ok: false, code, reason }) for a release it cannot serve.
    const answer = await ask<{ released?: boolean }>(nc, `${prefix}.release`, release);
    return { reply, released: answer.released === true };
  });
}
