/**
 * Cluster scope end to end: three real limiter processes, one Redis, NATS and HTTP at once.
 * A private redis-server (its own port) is stopped and restarted to check onStoreFailure.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import {
  configFile,
  httpAcquire,
  type Json,
  natsAcquire,
  post,
  sleep,
  waitReady,
} from './support/limiter-http';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { intoWindow } from './support/cluster-load';
import { waitUntil } from './support/nats-process';
import { privateRedis, type RedisProcess } from './support/redis-process';
import { awayFromWindowEnd, redisClock } from './support/window';

jest.setTimeout(90_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const HOUR = 3_600_000;

/**
 * Three limiters on the shared Redis and NATS, one queue group, each with its own data dir.
 * Exactness, not latency, is checked with them: REDIS_TIMEOUT_MS counts from when a request asks
 * the store, and 1000 acquires at once on a loaded 2-core machine can outlast the default 500 ms,
 * after which onStoreFailure (local) would admit beside Redis. Each goes `into` as soon as it
 * runs, so that afterAll stops it even when another failed to start.
 */
async function startThree(
  into: LimiterProcess[],
  dir: string,
  config: string,
  prefix: string,
  group: string,
): Promise<void> {
  const started = await Promise.allSettled(
    [0, 1, 2].map(async (i) => {
      const limiter = await startLimiter({
        NATS_URL,
        NATS_SUBJECT_PREFIX: prefix,
        NATS_QUEUE_GROUP: group,
        REDIS_URL,
        REDIS_TIMEOUT_MS: '5000',
        CONFIG_FILE: config,
        DATA_DIR: join(dir, `data-${i}`),
      });
      into.push(limiter);
      return limiter;
    }),
  );
  const failed = started.find((s) => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  await Promise.all(into.map((l) => waitReady(l)));
}

/** The waiters in `url`'s own line for (key, quota): each replica keeps its own. */
async function queuedOn(url: string, key: string, quota: string): Promise<unknown> {
  const res = await fetch(`${url}/v1/stats/${encodeURIComponent(key)}?quota=${quota}`);
  return ((await res.json()) as Json)['queued'];
}

describe('cluster scope: three limiters on one Redis', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cluster-'));
  const prefix = uniquePrefix();
  const group = `q-${randomUUID()}`;
  const quota = `shared-${randomUUID()}`;
  const limiters: LimiterProcess[] = [];
  let nc: NatsConnection;
  let redisNow: () => number;

  beforeAll(async () => {
    const config = configFile(dir, [
      {
        name: quota,
        scope: 'cluster',
        limits: [
          { name: 'r', unit: 'requests', limit: 10, window: '1h', algorithm: 'fixed_window' },
        ],
      },
      {
        name: `${quota}-wait`,
        scope: 'cluster',
        limits: [
          { name: 'r', unit: 'requests', limit: 2, window: '2s', algorithm: 'fixed_window' },
        ],
        queue: { maxSize: 10, maxWaitMs: 5000 },
      },
    ]);
    await startThree(limiters, dir, config, prefix, group);
    nc = await connect({ servers: NATS_URL });
    redisNow = await redisClock(REDIS_URL);
  });

  afterAll(async () => {
    await nc?.close();
    const codes = await Promise.all(limiters.map((l) => l.stop()));
    expect(codes).toEqual([0, 0, 0]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('1000 concurrent acquires, half over NATS, half over HTTP to the three, admit exactly 10, ten times', async () => {
    for (let round = 0; round < 10; round++) {
      // Exactly 10 of a fixed hour on Redis's clock: a round is not to straddle its turn.
      await awayFromWindowEnd(HOUR, 5_000, redisNow);
      const key = `burst-${round}-${randomUUID()}`;
      const body = { key, quota };
      const replies = await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          i % 2 === 0
            ? natsAcquire(nc, `${prefix}.acquire`, body)
            : httpAcquire(limiters[i % 3]!.url, body),
        ),
      );
      const admitted = replies.filter((r) => r['allowed'] === true);
      expect(admitted).toHaveLength(10);
      expect(replies.filter((r) => r['code'] === 'RATE_LIMITED')).toHaveLength(990);
      expect(new Set(admitted.map((r) => r['remaining']))).toEqual(
        new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
      );
      const http = replies.filter((r) => r['status'] !== undefined && r['allowed'] === false);
      expect(http.every((r) => r['status'] === 429)).toBe(true);
    }
  });

  it('decide answers from Redis and charges nothing, on every replica', async () => {
    const key = `decide-${randomUUID()}`;
    await httpAcquire(limiters[0]!.url, { key, quota, cost: 4 });
    for (const l of limiters) {
      const res = await fetch(`${l.url}/v1/decide`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key, quota, cost: 6 }),
      });
      expect(await res.json()).toMatchObject({ allowed: true, remaining: 0 });
    }
    expect(await httpAcquire(limiters[1]!.url, { key, quota, cost: 7 })).toMatchObject({
      allowed: false,
      code: 'RATE_LIMITED',
    });
  });

  it('bad inputs naming a cluster quota are refused naming the field, and charge nothing', async () => {
    const key = `bad-${randomUUID()}`;
    const cases: [Json, number, string, string][] = [
      [{ key, quota, cost: -1 }, 400, 'INVALID_REQUEST', 'cost'],
      [{ key, quota, cost: 1.5 }, 400, 'INVALID_REQUEST', 'cost'],
      [{ key, quota, cost: { requests: 'x' } }, 400, 'INVALID_REQUEST', 'cost'],
      [{ key: 7, quota }, 400, 'INVALID_REQUEST', 'key'],
      [{ key, quota, wait: 'yes' }, 400, 'INVALID_REQUEST', 'wait'],
      [{ key, quota, cost: 11 }, 429, 'COST_EXCEEDS_LIMIT', 'cost'],
    ];
    for (const [body, status, code, field] of cases) {
      const reply = await httpAcquire(limiters[0]!.url, body);
      expect([reply['status'], reply['code']]).toEqual([status, code]);
      expect(String(reply['reason'])).toContain(field);
    }
    const res = await fetch(`${limiters[1]!.url}/v1/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key, quota, cost: 10 }),
    });
    expect(await res.json()).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('waiters of one replica are admitted in arrival order when the window turns', async () => {
    const key = `wait-${randomUUID()}`;
    const url = limiters[2]!.url;
    const ask = (id: string): Promise<Json> =>
      httpAcquire(url, { key, quota: `${quota}-wait`, wait: true, requestId: id });
    // Start just after a window turned (on Redis's clock, which decides), so the next turn is
    // ~1.7 s away however slow the machine.
    await intoWindow(redisNow, 2000, 100, 200);
    const first = await Promise.all([ask('w0'), ask('w1')]);
    expect(first.map((r) => [r['code'], r['waitedMs']])).toEqual([
      ['OK', 0],
      ['OK', 0],
    ]);
    const doneAt: Record<string, number> = {};
    const later = (id: string): Promise<Json> =>
      ask(id).then((r) => {
        doneAt[id] = performance.now();
        return r;
      });
    const w2 = later('w2');
    // w3 arrives once w2 is in the line, not merely sent: requests on two connections have no order.
    await waitUntil('w2 waiting', async () => (await queuedOn(url, key, `${quota}-wait`)) === 1);
    const w3 = later('w3');
    const [r2, r3] = await Promise.all([w2, w3]);
    expect([r2['code'], r3['code']]).toEqual(['OK', 'OK']);
    // Both waited for the next window, and the earlier one was answered first.
    expect(r3['waitedMs']).toBeGreaterThan(1000);
    expect(r2['waitedMs'] as number).toBeGreaterThan(r3['waitedMs'] as number);
    expect(doneAt['w2']!).toBeLessThanOrEqual(doneAt['w3']!);
    // A batch is decided in Redis too: the key is full in this window.
    const batch = await fetch(`${url}/v1/acquire/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: [
          { key, quota: `${quota}-wait` },
          { key: 'x', quota: 'no-such-quota' },
        ],
      }),
    });
    const codes = ((await batch.json()) as { replies: Json[] }).replies.map((r) => r['code']);
    expect(codes).toEqual(['RATE_LIMITED', 'UNKNOWN_QUOTA']);
  });
});

describe('cluster scope: key operations across three limiters', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cluster-ops-'));
  const prefix = uniquePrefix();
  const llm = `llm-${randomUUID()}`;
  const lease = `lease-${randomUUID()}`;
  const limiters: LimiterProcess[] = [];
  let nc: NatsConnection;

  beforeAll(async () => {
    const config = configFile(dir, [
      {
        name: llm,
        scope: 'cluster',
        limits: [
          { name: 'rpm', unit: 'requests', limit: 2, window: '1h', algorithm: 'sliding_window' },
          { name: 'tpm', unit: 'tokens', limit: 1000, window: '1h', algorithm: 'sliding_window' },
        ],
      },
      {
        name: lease,
        scope: 'cluster',
        limits: [
          { name: 'r', unit: 'requests', limit: 100, window: '1h', algorithm: 'token_bucket' },
        ],
        concurrency: { max: 1, leaseTtlMs: 30_000 },
        queue: { maxSize: 10, maxWaitMs: 10_000 },
      },
    ]);
    await startThree(limiters, dir, config, prefix, `q-${randomUUID()}`);
    nc = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await nc?.close();
    const codes = await Promise.all(limiters.map((l) => l.stop()));
    expect(codes).toEqual([0, 0, 0]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('release, usage, stats and idempotent requestIds act on the one state in Redis', async () => {
    const [a, b, c] = limiters.map((l) => l.url) as [string, string, string];
    const key = `user-${randomUUID()}`;
    const first = await httpAcquire(a, { key, quota: llm, cost: { requests: 1, tokens: 600 } });
    expect(first).toMatchObject({ status: 200, allowed: true });
    // The same client requestId on another replica: the first answer again, charged once.
    const named = { key, quota: llm, cost: { requests: 1, tokens: 300 }, requestId: 'job-1' };
    const once = await httpAcquire(b, named);
    const twice = await natsAcquire(nc, `${prefix}.acquire`, named);
    expect([once['allowed'], twice['allowed']]).toEqual([true, true]);
    expect(twice['requestId']).toBe('job-1');
    const stats = (await (await fetch(`${c}/v1/stats/${key}?quota=${llm}`)).json()) as Json;
    expect(stats).toMatchObject({ approved: 2, denied: 0, scope: 'cluster' });
    expect((stats['limits'] as Json[]).map((l) => l['used'])).toEqual([2, 900]);
    // The generated id released on a third replica: the cost goes back, once.
    const release = { key, quota: llm, requestId: first['requestId'] };
    expect(await post(c, '/v1/release', release)).toMatchObject({ status: 200, released: true });
    expect(await post(b, '/v1/release', release)).toMatchObject({ released: false });
    // Usage settles job-1 from 300 estimated tokens to 950 actual, over NATS.
    const settled = await natsAcquire(nc, `${prefix}.usage`, {
      key,
      quota: llm,
      requestId: 'job-1',
      cost: { requests: 1, tokens: 950 },
    });
    expect(((settled['usage'] as Json)['limits'] as Json[]).map((l) => l['used'])).toEqual([
      1, 950,
    ]);
    const refused = await httpAcquire(a, { key, quota: llm, cost: { requests: 1, tokens: 100 } });
    expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMITED', limitName: 'tpm' });
  });

  it('a concurrency lease held on one replica makes a waiter on another wait for its release', async () => {
    const [a, b, c] = limiters.map((l) => l.url) as [string, string, string];
    const key = `worker-${randomUUID()}`;
    const held = await httpAcquire(a, { key, quota: lease });
    expect(held).toMatchObject({ status: 200, allowed: true });
    expect(typeof held['leaseId']).toBe('string');
    expect(await httpAcquire(c, { key, quota: lease })).toMatchObject({
      status: 429,
      code: 'CONCURRENCY_LIMITED',
    });
    const waiting = httpAcquire(b, { key, quota: lease, wait: true, maxWaitMs: 10_000 });
    // In b's line before the lease is held a while longer and released, however slow the machine.
    await waitUntil('the waiter in line on b', async () => (await queuedOn(b, key, lease)) === 1);
    await sleep(300);
    const releasedAt = Date.now();
    expect(
      await post(c, '/v1/release', { key, quota: lease, leaseId: held['leaseId'] }),
    ).toMatchObject({ status: 200, released: true });
    const admitted = await waiting;
    expect(admitted).toMatchObject({ status: 200, allowed: true });
    // Admitted on the waiter's next poll, long before the lease's 30 s TTL.
    expect(Date.now() - releasedAt).toBeLessThan(5_000);
    expect(admitted['waitedMs']).toBeGreaterThanOrEqual(250);
  });
});

describe('cluster scope: Redis stopped and restarted under load', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cluster-fail-'));
  let redis: RedisProcess;
  let limiter: LimiterProcess;
  const quotas = ['closed', 'open', 'local'].map((policy) => ({
    name: `p-${policy}`,
    scope: 'cluster',
    onStoreFailure: policy,
    limits: [{ name: 'r', unit: 'requests', limit: 10, window: '1h', algorithm: 'fixed_window' }],
  }));

  beforeAll(async () => {
    redis = await privateRedis();
    limiter = await startLimiter({
      NATS_URL: '',
      REDIS_URL: redis.url,
      LIMITER_REPLICAS: '2',
      CONFIG_FILE: configFile(dir, quotas),
      DATA_DIR: join(dir, 'data'),
    });
    await waitReady(limiter);
  });

  afterAll(async () => {
    expect(await limiter.stop()).toBe(0);
    await redis.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every request by its policy while Redis is down, and is exact again once it is back', async () => {
    const key = `k-${randomUUID()}`;
    const load = async (): Promise<Json[]> =>
      Promise.all(
        quotas.flatMap((q) =>
          Array.from({ length: 20 }, () => httpAcquire(limiter.url, { key, quota: q.name })),
        ),
      );
    const before = await load();
    expect(before.filter((r) => r['allowed'] === true)).toHaveLength(30);

    await redis.kill();
    const down = `${key}-down`;
    const started = Date.now();
    const during = await Promise.all(
      quotas.flatMap((q) =>
        Array.from({ length: 20 }, () => httpAcquire(limiter.url, { key: down, quota: q.name })),
      ),
    );
    // Every request answered, promptly, by its policy.
    expect(Date.now() - started).toBeLessThan(5_000);
    const by = (name: string): Json[] => during.filter((r) => r['quota'] === name);
    for (const name of ['p-closed', 'p-open', 'p-local']) expect(by(name)).toHaveLength(20);
    expect(by('p-closed').every((r) => r['code'] === 'UNAVAILABLE' && r['status'] === 503)).toBe(
      true,
    );
    expect(by('p-open').every((r) => r['allowed'] === true)).toBe(true);
    // local: limit / LIMITER_REPLICAS = 5 on this replica.
    expect(by('p-local').filter((r) => r['allowed'] === true)).toHaveLength(5);
    expect(await waitReady(limiter, 'degraded')).toMatchObject({ ready: true });
    const metrics = await (await fetch(`${limiter.url}/metrics`)).text();
    expect(metrics).toMatch(/^ratelimit_store_degraded 1$/m);

    await redis.start();
    const back = Date.now();
    await waitReady(limiter, 'ready');
    expect(Date.now() - back).toBeLessThan(5_000);
    const fresh = `${key}-back`;
    const after = await Promise.all(
      Array.from({ length: 30 }, () => httpAcquire(limiter.url, { key: fresh, quota: 'p-closed' })),
    );
    expect(after.filter((r) => r['allowed'] === true)).toHaveLength(10);
    expect(limiter.output()).not.toMatch(/Unhandled|unhandled/);
  });
});
