/**
 * Capacity leases in the real Redis (driver.lua's lease and settle ops): how a slice is sized,
 * that a refusal charges nothing, that a give-back counts only for the grant still on record, that
 * a token bucket does not refill what is held, that a reset keeps outstanding slices counted.
 */
import { compileQuota, type LimitSpec } from '@app/engine';
import { Redis } from 'ioredis';
import { RedisQuotaStore, type ClusterQuota } from '../apps/limiter/src/cluster/redis-quota-store';
import { leaseAsk } from './support/lease-ask';
import { uniquePrefix } from './support/limiter-process';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
jest.setTimeout(30_000);

const limit = (over: Partial<LimitSpec> = {}): LimitSpec => ({
  name: 'r',
  unit: 'requests',
  limit: 100,
  windowMs: 3_600_000,
  algorithm: 'fixed_window',
  ...over,
});

const quota = (...limits: LimitSpec[]): ClusterQuota =>
  compileQuota({ name: `${uniquePrefix()}.q`, limits });

const ask = leaseAsk;

describe('capacity leases in Redis (driver.lua lease and settle)', () => {
  let redis: Redis;
  let store: RedisQuotaStore;

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { enableAutoPipelining: true });
    store = new RedisQuotaStore(redis, { timeoutMs: 30_000 });
  });
  afterAll(() => redis.quit());

  const used = async (q: ClusterQuota, key: string): Promise<number[]> =>
    (await store.stats(q, key)).limits.map((l) => l.used);

  it('grants what is wanted, charged as requests would be, until the window ends', async () => {
    const q = quota(limit());
    const g = await store.lease(q, 'k', ask({ want: [10] }));
    expect(g.outcome.allowed).toBe(true);
    expect(g.granted).toEqual([10]);
    const windowEnd = g.outcome.now - (g.outcome.now % 3_600_000) + 3_600_000;
    expect(g.until).toEqual([Math.min(windowEnd, g.outcome.now + 1000)]);
    expect(await used(q, 'k')).toEqual([10]);
  });

  it('caps a slice at a share of what remains per replica, never below the need', async () => {
    const q = quota(limit());
    const g = await store.lease(q, 'k', ask({ want: [90], replicas: 3 }));
    expect(g.granted).toEqual([33]);
    const h = await store.lease(q, 'k', ask({ holder: 'b', want: [90], need: [40], replicas: 3 }));
    expect(h.granted).toEqual([40]);
    // 27 remain: a need of 28 is refused and charges nothing.
    const r = await store.lease(q, 'k', ask({ holder: 'c', want: [90], need: [28], replicas: 3 }));
    expect(r.outcome.allowed).toBe(false);
    expect(r.outcome.retryAfterMs).toBeGreaterThan(0);
    expect(r.granted).toEqual([0]);
    expect(await used(q, 'k')).toEqual([73]);
  });

  it('counts the live grants of other replicas as sharers', async () => {
    const q = quota(limit({ limit: 90 }));
    await store.lease(q, 'k', ask({ holder: 'a', want: [1], need: [1] }));
    await store.lease(q, 'k', ask({ holder: 'b', want: [1], need: [1] }));
    // 88 remain, three holders (c and the two others): 29.
    const g = await store.lease(q, 'k', ask({ holder: 'c', want: [1000] }));
    expect(g.granted).toEqual([29]);
  });

  it('gives the unspent units back only for the grant on record', async () => {
    const q = quota(limit());
    const g = await store.lease(q, 'k', ask({ want: [10] }));
    const seq = g.outcome.seq;
    // 4 spent, 6 back; the new ask wants nothing.
    await store.lease(q, 'k', ask({ prevSeq: seq, want: [0], need: [0], unspent: [6] }));
    expect(await used(q, 'k')).toEqual([4]);
    // The same give-back again finds no record: nothing returns twice.
    await store.lease(q, 'k', ask({ prevSeq: seq, want: [0], need: [0], unspent: [6] }));
    expect(await used(q, 'k')).toEqual([4]);
  });

  it('adds the decisions made from a slice to the key stats', async () => {
    const q = quota(limit());
    await store.lease(q, 'k', ask({ want: [0], need: [0], approved: 7, denied: 2 }));
    const s = await store.stats(q, 'k');
    expect([s.approved, s.denied]).toEqual([7, 2]);
  });

  it('token bucket: held tokens are not refilled until given back', async () => {
    const q = quota(limit({ algorithm: 'token_bucket', limit: 100, windowMs: 100 }));
    // 100 tokens per 100 ms: a 60-token grant held, then 200 ms pass.
    const g = await store.lease(q, 'k', ask({ want: [60], need: [60], ttlMs: 5000 }));
    expect(g.granted).toEqual([60]);
    await new Promise((r) => setTimeout(r, 200));
    expect(await used(q, 'k')).toEqual([60]);
    await store.lease(q, 'k', ask({ prevSeq: g.outcome.seq, want: [0], need: [0], unspent: [0] }));
    await new Promise((r) => setTimeout(r, 200));
    expect(await used(q, 'k')).toEqual([0]);
  });

  it('token bucket: a hold ends when its record expires', async () => {
    const q = quota(limit({ algorithm: 'token_bucket', limit: 100, windowMs: 100 }));
    const g = await store.lease(q, 'k', ask({ want: [60], need: [60], ttlMs: 100 }));
    expect(g.until[0]! - g.outcome.now).toBe(100);
    await new Promise((r) => setTimeout(r, 300));
    expect(await used(q, 'k')).toEqual([0]);
  });

  it('a reset keeps outstanding slices counted', async () => {
    const q = quota(limit());
    await store.lease(q, 'k', ask({ want: [10] }));
    await store.acquire(q, 'k', { requests: 5 });
    expect(await used(q, 'k')).toEqual([15]);
    await store.reset(q, 'k');
    expect(await used(q, 'k')).toEqual([10]);
  });

  it('sliding log: a granted unit counts a whole window after its spend deadline', async () => {
    const q = quota(limit({ algorithm: 'sliding_window', limit: 20, windowMs: 1000 }));
    // Demand of 25 over the 100 ms horizon; the deadline is the horizon capped at a fiftieth of
    // the window (a leased unit counts at most 2% longer), and the slice is the demand until then.
    const g = await store.lease(q, 'k', ask({ want: [25], horizonMs: 100 }));
    expect(g.until[0]! - g.outcome.now).toBe(20);
    expect(g.granted).toEqual([5]);
    const s = await store.stats(q, 'k');
    expect(s.limits[0]!.used).toBe(5);
    // Counted until until + windowMs, whenever Redis answered the stats (its own TIME).
    expect(s.now + s.limits[0]!.resetMs).toBe(g.until[0]! + 1000);
  });

  it('settle charges more now or gives back where the grant charged', async () => {
    const q = quota(limit(), limit({ name: 't', unit: 'tokens', limit: 1000 }));
    const g = await store.lease(q, 'k', ask({ want: [5, 100], need: [1, 10], unspent: [0, 0] }));
    expect(g.granted).toEqual([5, 100]);
    await store.settle(q, 'k', g.outcome.now, g.until, [0, -30]);
    expect(await used(q, 'k')).toEqual([5, 70]);
    await store.settle(q, 'k', g.outcome.now, g.until, [0, 50]);
    expect(await used(q, 'k')).toEqual([5, 120]);
  });

  it('a release or usage of a leased admission reaches its holder as a note, once', async () => {
    const q = quota(limit());
    const g = await store.lease(q, 'k', ask({ holder: 'ab.', want: [10] }));
    expect(g.notes).toEqual([]);
    // Another replica: the holder has a grant on the key, so the release is taken.
    expect(await store.release(q, 'k', 'ab.l5', undefined)).toBe(true);
    // Usage is charged whole where it arrives (counted more until the holder gives back).
    await store.usage(q, 'k', 'ab.l6', { requests: 3 });
    expect(await used(q, 'k')).toEqual([13]);
    // No grant of holder cd. on the key: nobody would read the note.
    expect(await store.release(q, 'k', 'cd.l1', undefined)).toBe(false);
    const next = await store.lease(q, 'k', ask({ holder: 'ab.', prevSeq: g.outcome.seq }));
    expect(next.notes).toEqual([
      { kind: 'release', id: 'ab.l5' },
      { kind: 'usage', id: 'ab.l6' },
    ]);
    const after = await store.lease(q, 'k', ask({ holder: 'ab.', prevSeq: next.outcome.seq }));
    expect(after.notes).toEqual([]);
  });

  it('per-request ops and lease ops share one call', async () => {
    const q = quota(limit({ limit: 10 }));
    const [a, g, b] = await Promise.all([
      store.acquire(q, 'k', undefined),
      store.lease(q, 'k', ask({ want: [5] })),
      store.acquire(q, 'k', undefined),
    ]);
    expect([a.allowed, g.granted[0], b.allowed]).toEqual([true, 5, true]);
    expect(await used(q, 'k')).toEqual([7]);
  });
});
