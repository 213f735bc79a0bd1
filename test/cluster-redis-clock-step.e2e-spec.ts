/**
 * Redis's clock stepped back (issue 25 point 7): a key written while it was an hour ahead, as the
 * real Redis would hold it had its clock come back since. The cluster scripts date what is later
 * than Redis's TIME at it, as the engine does: a key is locked one window (or one refill) at
 * most, a concurrency lease and a capacity lease hold their span from now, never an hour.
 */
import { compileQuota, type LimitSpec, type QuotaSpec } from '@app/engine';
import { Redis } from 'ioredis';
import { RedisQuotaStore, type ClusterQuota } from '../apps/limiter/src/cluster/redis-quota-store';
import { leaseAsk } from './support/lease-ask';
import { uniquePrefix } from './support/limiter-process';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const HOUR = 3_600_000;
jest.setTimeout(30_000);

/** Moves every instant of a key's state (first limit), leases and grants an hour ahead. */
const AHEAD = `
local k, H, algorithm = KEYS[1], tonumber(ARGV[1]), ARGV[2]
local s = cmsgpack.unpack(redis.call('HGET', k, 's'))
s[2] = s[2] + H
if s[5] > 0 then s[5] = s[5] + H end
for _, lease in ipairs(s[6]) do lease[2] = lease[2] + H end
local state = s[8]
if algorithm == 'fixed_window' then
  state[1], state[2] = state[1] + H, state[2] + H
elseif algorithm == 'token_bucket' then
  state[2] = state[2] + H
end
redis.call('HSET', k, 's', cmsgpack.pack(s))
local g = redis.call('HGET', k, 'g')
if g then
  local grants = cmsgpack.unpack(g)
  for _, r in pairs(grants) do
    r[2], r[3] = r[2] + H, r[3] + H
    for i, u in ipairs(r[5]) do if u > 0 then r[5][i] = u + H end end
  end
  redis.call('HSET', k, 'g', cmsgpack.pack(grants))
end
redis.call('PEXPIRE', k, 2 * H)
return 1`;

const limit = (algorithm: LimitSpec['algorithm'], max: number, windowMs: number): LimitSpec => ({
  name: 'r',
  unit: 'requests',
  limit: max,
  windowMs,
  algorithm,
});

const quota = (limits: LimitSpec[], extra: Partial<QuotaSpec> = {}): ClusterQuota =>
  compileQuota({ name: `${uniquePrefix()}.q`, limits, ...extra });

describe('cluster scope after Redis’s clock stepped back an hour (real Redis)', () => {
  let redis: Redis;
  let store: RedisQuotaStore;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
    store = new RedisQuotaStore(redis, { timeoutMs: 30_000 });
  });
  afterAll(() => redis.quit());

  const stepBack = async (q: ClusterQuota, key: string): Promise<void> => {
    const algorithm = q.limits[0]!.algorithm;
    await redis.eval(AHEAD, 1, RedisQuotaStore.stateKey(q.name, key), HOUR, algorithm);
  };

  it('fixed_window: a full window locks the key one window from now', async () => {
    const q = quota([limit('fixed_window', 2, 60_000)]);
    expect((await store.acquire(q, 'k', { requests: 2 })).allowed).toBe(true);
    await stepBack(q, 'k');
    const refused = await store.acquire(q, 'k', undefined);
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 60_000 });
  });

  it('token_bucket: refills from now, and is admitted at retryAfterMs', async () => {
    const q = quota([limit('token_bucket', 10, 1000)]);
    expect((await store.acquire(q, 'k', { requests: 10 })).allowed).toBe(true);
    await stepBack(q, 'k');
    const refused = await store.acquire(q, 'k', undefined);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(100);
    // Redis's own clock has to pass: no virtual clock reaches into TIME.
    await new Promise((resolve) => setTimeout(resolve, refused.retryAfterMs + 5));
    expect((await store.acquire(q, 'k', undefined)).allowed).toBe(true);
  });

  it('a concurrency lease lasts its leaseTtlMs from now at most', async () => {
    const q = quota([limit('fixed_window', 100, 60_000)], {
      concurrency: { max: 1, leaseTtlMs: 2000 },
    });
    expect((await store.acquire(q, 'k', undefined)).allowed).toBe(true);
    await stepBack(q, 'k');
    const refused = await store.acquire(q, 'k', undefined);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(2000);
  });

  it('a capacity lease’s record holds its span from now: the key lives minutes, not an hour', async () => {
    const q = quota([limit('token_bucket', 10, 1000)]);
    expect((await store.lease(q, 'k', leaseAsk({ want: [5] }))).granted).toEqual([5]);
    await stepBack(q, 'k');
    await store.acquire(q, 'k', undefined); // a call that writes the key again
    const ttl = await redis.pttl(RedisQuotaStore.stateKey(q.name, 'k'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10_000);
  });
});
