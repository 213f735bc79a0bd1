/**
 * Cluster scope's key operations against the real Redis, with two connections standing for two
 * replicas: release, usage settle, stats, reset, idempotent requestIds, concurrency leases and
 * calendar-aligned windows, all decided by the script on Redis's clock; and the coalescing of
 * many requests into few script calls.
 */
import { compileQuota, type LimitSpec, type QuotaSpec } from '@app/engine';
import { Redis } from 'ioredis';
import {
  MAX_BATCH,
  RECEIPTS_PER_KEY,
  RedisQuotaStore,
  type ClusterQuota,
} from '../apps/limiter/src/cluster/redis-quota-store';
import { privateRedis, type RedisProcess } from './support/redis-process';
import { uniquePrefix } from './support/limiter-process';
import { awayFromWindowEnd, redisClock } from './support/window';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const DAY = 86_400_000;
const MINUTE = 60_000;

// Each test first waits up to 5 s for the minute to have time left (beforeEach): more than Jest's
// default 5 s for a hook or a test.
jest.setTimeout(30_000);

function quota(limits: LimitSpec[], over: Partial<QuotaSpec> = {}): ClusterQuota {
  return compileQuota({ name: `${uniquePrefix()}.q`, limits, ...over });
}

const requests = (limit: number, algorithm: LimitSpec['algorithm'] = 'fixed_window') =>
  ({ name: 'r', unit: 'requests', limit, windowMs: MINUTE, algorithm }) as const;
const tokens = (limit: number) =>
  ({ name: 't', unit: 'tokens', limit, windowMs: MINUTE, algorithm: 'sliding_window' }) as const;

// These tests check counts, not latency: a store call that a loaded machine delays past the
// product's 500 ms timeout must not fail them (it answered UNAVAILABLE and opened the circuit,
// failing the tests after it). Timeouts are tested with a frozen Redis (limiter-redis-hang).
const EXACTNESS_ONLY = { timeoutMs: 30_000 };
describe('cluster scope key operations (real Redis)', () => {
  const connections: Redis[] = [];
  let a: RedisQuotaStore;
  let b: RedisQuotaStore;
  let redisNow: () => number;

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) connections.push(new Redis(REDIS_URL));
    [a, b] = connections.map((c) => new RedisQuotaStore(c, EXACTNESS_ONLY)) as [
      RedisQuotaStore,
      RedisQuotaStore,
    ];
    redisNow = await redisClock(connections[0]!);
  });

  // Exact counts in fixed minute windows (and stats counted per minute) on Redis's clock: start
  // each test well before the minute turns, which would reset them.
  beforeEach(() => awayFromWindowEnd(MINUTE, 5_000, redisNow));

  afterAll(async () => {
    await Promise.all(connections.map((c) => c.quit()));
  });

  it.each(['fixed_window', 'sliding_window', 'token_bucket'] as const)(
    '%s: release on another replica gives the cost back once; unknown ids are not found',
    async (algorithm) => {
      const q = quota([requests(2, algorithm)]);
      const first = await a.acquire(q, 'k', undefined);
      expect((await a.acquire(q, 'k', undefined)).allowed).toBe(true);
      expect((await a.acquire(q, 'k', undefined)).allowed).toBe(false);
      const id = RedisQuotaStore.admittedId(first.seq);
      expect(await b.release(q, 'k', id, undefined)).toBe(true);
      expect(await b.release(q, 'k', id, undefined)).toBe(false);
      expect(await b.release(q, 'k', 'cs-1', undefined)).toBe(false);
      expect(await b.release(q, 'k', 'never-issued', undefined)).toBe(false);
      expect(await b.release(q, 'nobody', id, undefined)).toBe(false);
      expect((await b.acquire(q, 'k', undefined)).allowed).toBe(true);
      expect((await b.acquire(q, 'k', undefined)).allowed).toBe(false);
    },
  );

  it('a sliding limit moving between sub-buckets and a log keeps each count as long as it counted', async () => {
    const name = `${uniquePrefix()}.q`;
    const perMinute = (limit: number) =>
      compileQuota({ name, limits: [requests(limit, 'sliding_window')] });
    const buckets = perMinute(100); // sub-buckets of 6 s
    const log = perMinute(40); // a log of 40 requests
    const first = await a.acquire(buckets, 'k', 30);
    expect(first.allowed).toBe(true);
    // Replica b has the new config already: the state is carried over, not started afresh.
    const more = await b.acquire(log, 'k', 10);
    expect(more).toMatchObject({ allowed: true, limits: [{ used: 40 }] });
    const refused = await b.acquire(log, 'k', 1);
    const countedUntil = (Math.floor(first.now / 6000) + 11) * 6000;
    expect(refused).toMatchObject({ allowed: false, code: 'RATE_LIMITED' });
    expect(refused.retryAfterMs).toBe(countedUntil - refused.now);
    // And back: the log's entries (the later ones dated no earlier than those carried over) go
    // to the sub-bucket that counts them as long.
    const back = await a.stats(buckets, 'k');
    expect(back.limits).toEqual([{ used: 40, resetMs: countedUntil - back.now }]);
  });

  it('a client requestId gets its first answer again, charged once, on any replica', async () => {
    const q = quota([requests(1)]);
    const first = await a.acquire(q, 'k', undefined, 'req-1');
    const again = await b.acquire(q, 'k', undefined, 'req-1');
    expect(first).toMatchObject({ allowed: true, replayed: false });
    expect(again).toMatchObject({ allowed: true, replayed: true, seq: first.seq });
    expect((await a.stats(q, 'k')).limits[0]!.used).toBe(1);
    // A refusal is an answer too: the same id stays refused even once capacity is back.
    const refused = await a.acquire(q, 'k', undefined, 'req-2');
    expect(refused.allowed).toBe(false);
    expect(await a.release(q, 'k', 'req-1', undefined)).toBe(true);
    expect(await b.acquire(q, 'k', undefined, 'req-2')).toMatchObject({
      allowed: false,
      replayed: true,
    });
    expect((await b.acquire(q, 'k', undefined, 'req-3')).allowed).toBe(true);
  });

  it('a waiting attempt is not remembered as the answer: the retry can still be admitted', async () => {
    const q = quota([requests(1)]);
    const held = await a.acquire(q, 'k', undefined);
    expect((await a.decision('wait', q, 'k', undefined, 'w-1')).allowed).toBe(false);
    expect((await a.stats(q, 'k')).denied).toBe(0); // a waiter's retries are not refusals
    expect(await b.release(q, 'k', RedisQuotaStore.admittedId(held.seq), undefined)).toBe(true);
    expect(await b.decision('wait', q, 'k', undefined, 'w-1')).toMatchObject({
      allowed: true,
      replayed: false,
    });
  });

  it('usage settles an estimate to the actual cost, or records usage nobody acquired', async () => {
    const q = quota([requests(100), tokens(1000)]);
    const est = await a.acquire(q, 'k', { requests: 1, tokens: 500 }, 'llm-1');
    expect(est.allowed).toBe(true);
    const used = async (): Promise<number[]> => (await b.stats(q, 'k')).limits.map((l) => l.used);
    expect(await used()).toEqual([1, 500]);
    await b.usage(q, 'k', 'llm-1', { requests: 1, tokens: 200 });
    expect(await used()).toEqual([1, 200]);
    await a.usage(q, 'k', 'llm-1', { requests: 1, tokens: 900 });
    expect(await used()).toEqual([1, 900]);
    // As everywhere in the contract, a cost object without `requests` counts one request.
    const recorded = await a.usage(q, 'k', undefined, { tokens: 50 });
    expect(recorded.limits.map((l) => l.used)).toEqual([2, 950]);
    // Usage may go past the limit (it happened); acquires are refused until it slides out.
    await a.usage(q, 'k', undefined, { tokens: 100 });
    expect((await a.acquire(q, 'k', { requests: 1, tokens: 1 })).refusing).toBe(1);
  });

  it('stats count approved and denied in the window; reset forgets the counts', async () => {
    const q = quota([requests(3)]);
    for (let i = 0; i < 5; i++) await (i % 2 === 0 ? a : b).acquire(q, 'k', undefined);
    const s = await a.stats(q, 'k');
    expect(s).toMatchObject({ approved: 3, denied: 2, inFlight: 0 });
    expect(s.limits[0]).toMatchObject({ used: 3 });
    expect(await b.reset(q, 'k')).toBe(true);
    expect(await b.reset(q, 'unknown')).toBe(false);
    expect(await a.stats(q, 'k')).toMatchObject({ approved: 0, denied: 0 });
    expect((await a.acquire(q, 'k', undefined)).allowed).toBe(true);
  });

  it('concurrency leases: at most max in flight across replicas, freed by release or TTL', async () => {
    // Long enough that no lease of the checks below expires between two calls, however slow.
    const ttl = 2_000;
    const q = quota([requests(100)], { concurrency: { max: 2, leaseTtlMs: ttl } });
    const one = await a.acquire(q, 'k', undefined);
    const two = await b.acquire(q, 'k', undefined, 'named');
    expect([one.allowed, two.allowed]).toEqual([true, true]);
    const busy = await a.acquire(q, 'k', undefined);
    expect(busy).toMatchObject({ allowed: false, code: 'CONCURRENCY_LIMITED', inFlight: 2 });
    expect(busy.retryAfterMs).toBeGreaterThan(0);
    expect(busy.retryAfterMs).toBeLessThanOrEqual(ttl);
    // Released by leaseId on the other replica, and by requestId.
    expect(await b.release(q, 'k', undefined, RedisQuotaStore.leaseId(one.seq))).toBe(true);
    expect(await b.release(q, 'k', undefined, RedisQuotaStore.leaseId(one.seq))).toBe(false);
    expect((await b.acquire(q, 'k', undefined)).allowed).toBe(true);
    expect(await a.release(q, 'k', 'named', undefined)).toBe(true);
    const last = await a.acquire(q, 'k', undefined);
    expect(last.allowed).toBe(true);
    expect((await a.acquire(q, 'k', undefined)).code).toBe('CONCURRENCY_LIMITED');
    // A crashed caller never releases: the lease TTL frees its place, on Redis's clock.
    while (redisNow() < last.now + ttl + 5) {
      await new Promise((r) => setTimeout(r, last.now + ttl + 5 - redisNow()));
    }
    expect((await a.stats(q, 'k')).inFlight).toBe(0);
    expect((await a.acquire(q, 'k', undefined)).allowed).toBe(true);
  });

  it('calendar windows: a refusal waits until the zone’s next midnight on Redis time', async () => {
    const spec: LimitSpec = {
      name: 'rpd',
      unit: 'requests',
      limit: 3,
      windowMs: DAY,
      algorithm: 'fixed_window',
      align: 'calendar',
      timezone: 'America/Los_Angeles',
    };
    const q = quota([spec]);
    for (let i = 0; i < 3; i++) expect((await a.acquire(q, 'k', undefined)).allowed).toBe(true);
    const refused = await b.acquire(q, 'k', undefined);
    expect(refused.allowed).toBe(false);
    const [seconds] = await connections[0]!.time();
    const window = q.limits[0]!.calendar!.at(Number(seconds) * 1000);
    const expected = window.end - refused.now;
    expect(Math.abs(refused.retryAfterMs - expected)).toBeLessThan(1000);
    expect(window.end - window.start).toBeGreaterThanOrEqual(23 * 3_600_000);
  });

  it('remembered answers and receipts stay bounded per key', async () => {
    const q = quota([requests(1_000_000)]);
    const n = RECEIPTS_PER_KEY + 500;
    for (let from = 0; from < n; from += 500) {
      await Promise.all(
        Array.from({ length: 500 }, (_, i) => a.acquire(q, 'hot', undefined, `id-${from + i}`)),
      );
    }
    const key = RedisQuotaStore.stateKey(q.name, 'hot');
    const fields = await connections[0]!.hlen(key);
    // One state field, one receipt per slot, one remembered answer per live receipt.
    expect(fields).toBeLessThanOrEqual(1 + 2 * RECEIPTS_PER_KEY);
    expect(fields).toBeGreaterThan(RECEIPTS_PER_KEY);
    // The newest answers are still remembered; the oldest were forgotten with their slot.
    expect((await a.acquire(q, 'hot', undefined, `id-${n - 1}`)).replayed).toBe(true);
    expect((await a.acquire(q, 'hot', undefined, 'id-0')).replayed).toBe(false);
  });
});

describe('coalescing (private Redis)', () => {
  let redis: RedisProcess;
  let client: Redis;

  beforeAll(async () => {
    redis = await privateRedis();
    client = new Redis(redis.url);
  });

  afterAll(async () => {
    await client.quit();
    await redis.kill();
  });

  it('1000 concurrent acquires on one connection take few script calls and admit exactly 10', async () => {
    const store = new RedisQuotaStore(client, EXACTNESS_ONLY);
    const q = quota([requests(10, 'sliding_window'), tokens(1_000_000)]);
    await client.config('RESETSTAT');
    const outcomes = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => store.acquire(q, `k${i % 2}`, { tokens: 1 })),
    );
    expect(outcomes.filter((o) => o.allowed)).toHaveLength(20);
    const stats = await client.info('commandstats');
    const calls = [...stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual(Math.ceil(1000 / MAX_BATCH) + 2);
  });

  it('without coalescing (Redis Cluster) every request is its own call', async () => {
    const store = new RedisQuotaStore(client, { ...EXACTNESS_ONLY, coalesce: false });
    const q = quota([requests(10)]);
    // Exactly 10 of one fixed minute window: not across the turn of the minute.
    await awayFromWindowEnd(MINUTE, 5_000, await redisClock(client));
    await client.config('RESETSTAT');
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () => store.acquire(q, 'k', undefined)),
    );
    expect(outcomes.filter((o) => o.allowed)).toHaveLength(10);
    const stats = await client.info('commandstats');
    const calls = [...stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
    expect(calls).toBeGreaterThanOrEqual(50);
  });
});
