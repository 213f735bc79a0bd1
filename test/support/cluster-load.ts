/**
 * Load for cluster-scope tests: acquires over HTTP (to a chosen replica) and NATS (the queue group
 * picks the replica), each timed and never thrown, so that a test can check every answer after
 * the fact. Times are on `clock()`; `redisOffset` aligns that clock to Redis's TIME, the clock
 * cluster scope decides on.
 */
import type { Redis } from 'ioredis';
import type { NatsConnection } from 'nats';
import { sleep, type Json } from './limiter-http';

/** Where a request goes: one replica over HTTP, or NATS (whichever replica the queue group picks). */
export type Target = { readonly via: 'http'; readonly replica: number } | { readonly via: 'nats' };

/** The limiters' HTTP base URLs (by replica) and their NATS acquire subject. */
export interface Transports {
  readonly urls: readonly string[];
  readonly nc: NatsConnection;
  readonly subject: string;
}

/** One acquire as the client saw it. The decision was made somewhere in [sentAt, receivedAt]. */
export interface Sample {
  readonly via: 'http' | 'nats';
  /** The replica asked; known over HTTP only. */
  readonly replica: number | undefined;
  readonly body: Json;
  readonly sentAt: number;
  readonly receivedAt: number;
  /** HTTP status; undefined over NATS. */
  readonly status: number | undefined;
  readonly reply: Json | undefined;
  /** Set when no answer came within the timeout, or the transport failed. */
  readonly error: string | undefined;
}

/** Epoch ms with sub-ms resolution that never runs backwards, so intervals are sound. */
export const clock = (): number => performance.timeOrigin + performance.now();

/** Every HTTP replica, then as many NATS requesters: a mix that reaches all three either way. */
export function targetsFor(replicas: number, copies = 1): Target[] {
  const targets: Target[] = [];
  for (let c = 0; c < copies; c++) {
    for (let replica = 0; replica < replicas; replica++) targets.push({ via: 'http', replica });
    for (let replica = 0; replica < replicas; replica++) targets.push({ via: 'nats' });
  }
  return targets;
}

/** One acquire; resolves with what came back (or the error), never rejects. */
export async function send(
  t: Transports,
  target: Target,
  body: Json,
  timeoutMs: number,
): Promise<Sample> {
  const replica = target.via === 'http' ? target.replica : undefined;
  const sentAt = clock();
  const sample = (part: Pick<Sample, 'status' | 'reply' | 'error'>): Sample => ({
    via: target.via,
    replica,
    body,
    sentAt,
    receivedAt: clock(),
    ...part,
  });
  try {
    if (target.via === 'http') {
      const res = await fetch(`${t.urls[target.replica]!}/v1/acquire`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const reply = (await res.json()) as Json;
      return sample({ status: res.status, reply, error: undefined });
    }
    const msg = await t.nc.request(t.subject, Buffer.from(JSON.stringify(body)), {
      timeout: timeoutMs,
    });
    const reply = JSON.parse(Buffer.from(msg.data).toString('utf8')) as Json;
    return sample({ status: undefined, reply, error: undefined });
  } catch (error) {
    return sample({ status: undefined, reply: undefined, error: String(error) });
  }
}

/** Many acquires at once, spread over `targets` in turn. */
export function burst(
  t: Transports,
  targets: readonly Target[],
  count: number,
  body: Json,
  timeoutMs: number,
): Promise<Sample[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => send(t, targets[i % targets.length]!, body, timeoutMs)),
  );
}

export interface Load {
  /** The answers so far, for a test that waits until the stream has reached some state. */
  seen(): readonly Sample[];
  /** Stops the workers and resolves once every request in flight has its answer. */
  stop(): Promise<Sample[]>;
}

/**
 * A steady stream: one worker per target, each sending its next request once the previous one
 * was answered and `pauseMs()` passed. `body` is called at send time, so a test can switch keys
 * between phases while the stream runs.
 */
export function startLoad(
  t: Transports,
  targets: readonly Target[],
  body: (worker: number, n: number) => Json,
  options: { timeoutMs: number; pauseMs: () => number },
): Load {
  let running = true;
  const samples: Sample[] = [];
  const workers = targets.map(async (target, worker) => {
    for (let n = 0; running; n++) {
      samples.push(await send(t, target, body(worker, n), options.timeoutMs));
      await sleep(options.pauseMs());
    }
  });
  return {
    seen: () => samples,
    async stop() {
      running = false;
      await Promise.all(workers);
      return samples;
    },
  };
}

/**
 * What to add to `clock()` to read Redis's TIME, from the fastest of a few round trips (its
 * error is at most half that round trip).
 */
export async function redisOffset(redis: Redis): Promise<number> {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 5; i++) {
    const before = clock();
    const [seconds, micros] = await redis.time();
    const after = clock();
    const redisMs = Number(seconds) * 1000 + Number(micros) / 1000;
    if (after - before < best.rtt) {
      best = { rtt: after - before, offset: redisMs - (before + after) / 2 };
    }
  }
  return best.offset;
}

/**
 * Waits until `now()` is between `from` and `to` ms into a window of `windowMs`; windows are
 * aligned to the epoch, so this is just after one turned and long before the next.
 */
export async function intoWindow(
  now: () => number,
  windowMs: number,
  from: number,
  to: number,
): Promise<void> {
  for (;;) {
    const into = now() % windowMs;
    if (into >= from && into <= to) return;
    await sleep(into < from ? from - into : windowMs - into + from);
  }
}

/** A sample in a line of a failure message: enough to see what went wrong, and where. */
export function brief(s: Sample): Json {
  return {
    via: s.via,
    replica: s.replica,
    key: s.body['key'],
    quota: s.body['quota'],
    status: s.status,
    code: s.reply?.['code'],
    reason: s.reply?.['reason'],
    error: s.error,
    tookMs: Math.round(s.receivedAt - s.sentAt),
  };
}

/** Redis's TIME is in whole ms and the test's clock may drift from it by a little: widen by this. */
export const SLACK_MS = 2;

/**
 * The most admissions that certainly fell within one span of `spanMs` of Redis time: those whose
 * whole [sentAt, receivedAt] (widened by SLACK_MS) lies inside it. Only differences of times are
 * compared, so the clocks' offset cancels out. Spans starting where some interval starts cover
 * every case.
 */
export function mostWithinSpan(
  samples: readonly Sample[],
  spanMs: number,
): { count: number; at: Json[] } {
  const spans = samples
    .map((s) => ({ from: s.sentAt - SLACK_MS, to: s.receivedAt + SLACK_MS, s }))
    .sort((a, b) => a.from - b.from);
  let best: { count: number; at: Json[] } = { count: 0, at: [] };
  for (const start of spans) {
    const inside = spans.filter((b) => b.from >= start.from && b.to <= start.from + spanMs);
    if (inside.length > best.count) {
      const at = inside.map((b) => ({
        fromMs: Math.round(b.from - start.from),
        toMs: Math.round(b.to - start.from),
        via: b.s.via,
      }));
      best = { count: inside.length, at };
    }
  }
  return best;
}
