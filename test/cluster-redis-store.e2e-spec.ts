/**
 * Cluster scope's Redis store against the real Redis: one Lua call decides a request for every
 * limit of its quota, all or nothing, on Redis's clock, exactly across connections (replicas).
 */
import { compileQuota, type LimitSpec } from '@app/engine';
import { Redis } from 'ioredis';
import { RedisPool } from '../apps/limiter/src/cluster/redis-pool';
import { RedisQuotaStore, type ClusterQuota } from '../apps/limiter/src/cluster/redis-quota-store';
import { privateRedis, type RedisProcess } from './support/redis-process';
import { uniquePrefix } from './support/limiter-process';
import { awayFromWindowEnd, redisClock } from './support/window';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

// A test may first wait up to 5 s for a window to have time left (awayFromWindowEnd): more than
// Jest's default 5 s for the whole test.
jest.setTimeout(30_000);

function quota(...limits: LimitSpec[]): ClusterQuota {
  return compileQuota({ name: `${uniquePrefix()}.q`, limits });
}

const requests = (
  limit: number,
  windowMs: number,
  algorithm: LimitSpec['algorithm'],
): LimitSpec => ({
  name: 'r',
  unit: 'requests',
  limit,
  windowMs,
  algorithm,
});

// These tests check counts, not latency: a store call that a loaded machine delays past the
// product's 500 ms timeout must not fail them (it answered UNAVAILABLE and opened the circuit,
// failing the tests after it). Timeouts are tested with a frozen Redis (limiter-redis-hang).
const EXACTNESS_ONLY = { timeoutMs: 30_000 };
describe('RedisQuotaStore (real Redis)', () => {
  const connections: Redis[] = [];
  let stores: RedisQuotaStore[];
  let redisNow: () => number;

  beforeAll(async () => {
    // Three connections stand for three replicas.
    for (let i = 0; i < 3; i++)
      connections.push(new Redis(REDIS_URL, { enableAutoPipelining: true }));
    stores = connections.map((c) => new RedisQuotaStore(c, EXACTNESS_ONLY));
    redisNow = await redisClock(connections[0]!);
  });

  afterAll(async () => {
    await Promise.all(connections.map((c) => c.quit()));
  });

  it.each(['fixed_window', 'sliding_window', 'token_bucket'] as const)(
    '%s: 1000 concurrent acquires over three connections on a limit of 10 admit exactly 10, ten times',
    async (algorithm) => {
      const q = quota(requests(10, 60_000, algorithm));
      for (let round = 0; round < 10; round++) {
        // Exact counts in a fixed window aligned to Redis's minute: no round across its turn.
        await awayFromWindowEnd(60_000, 5_000, redisNow);
        const key = `key-${round}`;
        const outcomes = await Promise.all(
          Array.from({ length: 1000 }, (_, i) => stores[i % 3]!.acquire(q, key, undefined)),
        );
        expect(outcomes.filter((o) => o.allowed)).toHaveLength(10);
        const refused = outcomes.find((o) => !o.allowed)!;
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.refusing).toBe(0);
      }
    },
  );

  it('charges every limit or none: a refusal by tokens leaves the request count untouched', async () => {
    const q = quota(requests(5, 60_000, 'sliding_window'), {
      name: 'tpm',
      unit: 'tokens',
      limit: 100,
      windowMs: 60_000,
      algorithm: 'sliding_window',
    });
    const first = await stores[0]!.acquire(q, 'k', { requests: 1, tokens: 60 });
    expect(first.allowed).toBe(true);
    const second = await stores[1]!.acquire(q, 'k', { requests: 1, tokens: 60 });
    expect(second).toMatchObject({ allowed: false, refusing: 1 });
    expect(second.limits.map((l) => l.used)).toEqual([1, 60]);
    const third = await stores[2]!.acquire(q, 'k', { requests: 1, tokens: 40 });
    expect(third.allowed).toBe(true);
    expect(third.limits.map((l) => l.used)).toEqual([2, 100]);
  });

  it('decide answers as acquire would and charges nothing', async () => {
    const q = quota(requests(1, 60_000, 'fixed_window'));
    // The acquire and the last decide in one fixed minute: not across its turn.
    await awayFromWindowEnd(60_000, 5_000, redisNow);
    for (let i = 0; i < 3; i++)
      expect((await stores[0]!.decide(q, 'k', undefined)).allowed).toBe(true);
    expect((await stores[0]!.acquire(q, 'k', undefined)).allowed).toBe(true);
    expect((await stores[1]!.decide(q, 'k', undefined)).allowed).toBe(false);
  });

  it('token_bucket: the burst is admitted at once, then retryAfterMs is the refill of one token', async () => {
    // One token per 100 s: no run takes that long between the first call and the fourth.
    const tokenMs = 100_000;
    const q = quota({ ...requests(10, 10 * tokenMs, 'token_bucket'), burst: 3 });
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await stores[i % 3]!.acquire(q, 'k', undefined));
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, false]);
    const refused = outcomes[3]!;
    // Some of the token has refilled since the burst: exactly the Redis time since the first call.
    expect(refused.retryAfterMs).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(tokenMs);
    expect(refused.retryAfterMs).toBe(tokenMs - (refused.now - outcomes[0]!.now));
  });

  it('sliding_window: no interval of windowMs admits more than the limit, across connections', async () => {
    const windowMs = 300;
    const limit = 5;
    const q = quota(requests(limit, windowMs, 'sliding_window'));
    const admittedAt: number[] = [];
    const until = Date.now() + 1_500;
    let i = 0;
    while (Date.now() < until) {
      const batch = await Promise.all(
        Array.from({ length: 6 }, () => stores[i++ % 3]!.acquire(q, 'k', undefined)),
      );
      for (const o of batch) if (o.allowed) admittedAt.push(o.now);
      await new Promise((r) => setTimeout(r, 7));
    }
    admittedAt.sort((a, b) => a - b);
    expect(admittedAt.length).toBeGreaterThan(limit * 2);
    // Every window (t - windowMs, t] ending at an admission holds at most `limit` admissions.
    for (let end = 0; end < admittedAt.length; end++) {
      let inside = 0;
      for (let j = end; j >= 0 && admittedAt[j]! > admittedAt[end]! - windowMs; j--) inside++;
      expect(inside).toBeLessThanOrEqual(limit);
    }
  });

  it('SCRIPT FLUSH under load: every call still answers (EVALSHA reloads on NOSCRIPT)', async () => {
    const q = quota(requests(1_000_000, 60_000, 'fixed_window'));
    // A private Redis: flushing the shared one's scripts would reach every other test using it.
    const own = await privateRedis();
    const flushed = [0, 1, 2].map(() => new Redis(own.url, { enableAutoPipelining: true }));
    const ownStores = flushed.map((c) => new RedisQuotaStore(c, EXACTNESS_ONLY));
    const admin = new Redis(own.url);
    try {
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < 600; i++) {
        calls.push(ownStores[i % 3]!.acquire(q, `k${i % 7}`, undefined));
        if (i % 150 === 0) calls.push(admin.script('FLUSH'));
        if (i % 50 === 0) await new Promise((r) => setImmediate(r));
      }
      const results = await Promise.allSettled(calls);
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    } finally {
      await Promise.all([admin, ...flushed].map((c) => c.quit()));
      await own.kill();
    }
  });

  it('state expires when it holds no information any more, and keys of one (quota, key) share a tag', async () => {
    const q = quota(requests(10, 60_000, 'fixed_window'));
    // The key lives until its minute window ends: not about to end before PTTL reads it.
    await awayFromWindowEnd(60_000, 5_000, redisNow);
    const charged = await stores[0]!.acquire(q, 'k', undefined);
    const stateKey = RedisQuotaStore.stateKey(q.name, 'k');
    const ttl = await connections[0]!.pttl(stateKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000 - (charged.now % 60_000));
    expect(stateKey).toMatch(/^rl:\{[0-9a-z]+\}:/);
    // A refused-only or zero-cost key writes nothing.
    const zero = quota({ ...requests(10, 60_000, 'fixed_window'), unit: 'tokens' });
    await stores[0]!.acquire(zero, 'k', undefined);
    expect(await connections[0]!.exists(RedisQuotaStore.stateKey(zero.name, 'k'))).toBe(0);
  });

  describe('REDIS_URLS: two Redis servers', () => {
    let second: RedisProcess;
    let pool: RedisPool;

    beforeAll(async () => {
      second = await privateRedis();
      pool = new RedisPool([REDIS_URL, second.url]);
      expect(await pool.whenReady(10_000)).toBe(true);
    });

    afterAll(async () => {
      await pool.close();
      await second.kill();
    });

    it('spreads (quota, key)s over both by FNV-1a(key), each key exact on its own server', async () => {
      const q = quota(requests(3, 60_000, 'fixed_window'));
      const keys = Array.from({ length: 40 }, (_, i) => `spread-${i}`);
      // Exactly 3 per key of one fixed minute window: not across its turn.
      await awayFromWindowEnd(60_000, 5_000, redisNow);
      const outcomes = await Promise.all(
        keys.flatMap((key) =>
          Array.from({ length: 5 }, () => pool.storeFor(key).acquire(q, key, undefined)),
        ),
      );
      expect(outcomes.filter((o) => o.allowed)).toHaveLength(keys.length * 3);
      const direct = new Redis(second.url);
      try {
        const onSecond = await direct.keys(`rl:*:${q.name}:*`);
        // Both servers hold some of the keys, and each key has one home.
        expect(onSecond.length).toBeGreaterThan(5);
        expect(onSecond.length).toBeLessThan(35);
        const onFirst = await connections[0]!.keys(`rl:*:${q.name}:*`);
        expect(onFirst.length + onSecond.length).toBe(keys.length);
      } finally {
        await direct.quit();
      }
    });
  });
});
