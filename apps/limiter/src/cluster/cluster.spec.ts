import type { NormalisedAcquire } from '@app/contracts';
import { compileQuota, type LimitSpec, type QuotaSpec } from '@app/engine';
import { readLimiterSettings } from '../settings/limiter-settings';
import { costTooBig, decisionOf, type ClusterQuotaEntry } from './cluster-decision';
import { ClusterScope } from './cluster-scope';
import type { RedisPool } from './redis-pool';
import { calendarBounds, type ClusterOutcome } from './redis-quota-store';
import { localFallback } from './store-failure';

const spec = (over: Partial<QuotaSpec> = {}): QuotaSpec => ({
  name: 'q',
  scope: 'cluster',
  limits: [
    { name: 'rpm', unit: 'requests', limit: 10, windowMs: 60_000, algorithm: 'sliding_window' },
    { name: 'tpm', unit: 'tokens', limit: 1000, windowMs: 60_000, algorithm: 'sliding_window' },
  ],
  ...over,
});
const entry = (s: QuotaSpec): ClusterQuotaEntry => ({
  name: s.name,
  limits: compileQuota(s).limits,
  concurrency: s.concurrency,
  spec: s,
  leasable: false,
});
/** What the script answers: refusing is the 0-based limit index (-1: admitted); uses [used, resetMs]. */
const outcome = (
  refusing: number,
  retryAfterMs: number,
  uses: [number, number][],
  over: Partial<ClusterOutcome> = {},
): ClusterOutcome => ({
  allowed: refusing < 0,
  code: refusing < 0 ? 'OK' : 'RATE_LIMITED',
  now: 0,
  retryAfterMs,
  refusing,
  seq: refusing < 0 ? 7 : 0,
  replayed: false,
  inFlight: 0,
  approved: 0,
  denied: 0,
  limits: uses.map(([used, resetMs]) => ({ used, resetMs })),
  ...over,
});
const PACIFIC_DAY: LimitSpec = {
  name: 'rpd',
  unit: 'requests',
  limit: 5,
  windowMs: 86_400_000,
  algorithm: 'fixed_window',
  align: 'calendar',
  timezone: 'America/Los_Angeles',
};
const input: NormalisedAcquire = { key: 'k', quota: 'q', cost: { requests: 1, tokens: 100 } };

describe('REDIS_URL / REDIS_URLS', () => {
  it.each([
    [{}, []],
    [{ REDIS_URL: 'redis://a:6379' }, ['redis://a:6379']],
    [
      { REDIS_URL: 'redis://a:6379', REDIS_URLS: 'redis://b:1, rediss://c:2' },
      ['redis://b:1', 'rediss://c:2'],
    ],
  ])('%j gives %j', (env, urls) => {
    expect(readLimiterSettings(env).redisUrls).toEqual(urls);
  });

  it.each([
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ REDIS_URLS: 'redis://a:1,http://b' }, 'REDIS_URLS'],
  ])('refuses %j naming %s', (env, name) => {
    expect(() => readLimiterSettings(env)).toThrow(name);
  });
});

describe('onStoreFailure: local', () => {
  it.each([
    [10, 3, 3],
    [10, 1, 10],
    [1, 4, 1],
    [0, 4, 0],
  ])('limit %i over %i replicas is %i on each', (limit, replicas, expected) => {
    const s = spec({
      limits: [{ name: 'r', unit: 'requests', limit, windowMs: 1000, algorithm: 'fixed_window' }],
    });
    expect(localFallback(s, replicas).limits[0]!.limit).toBe(expected);
  });

  it('divides burst and concurrency too, and leaves local quotas alone', () => {
    const s = spec({
      limits: [
        {
          name: 'r',
          unit: 'requests',
          limit: 9,
          windowMs: 1000,
          algorithm: 'token_bucket',
          burst: 30,
        },
      ],
      concurrency: { max: 6, leaseTtlMs: 1000 },
    });
    const fallback = localFallback(s, 3);
    expect(fallback.limits[0]).toMatchObject({ limit: 3, burst: 10 });
    expect(fallback.concurrency).toMatchObject({ max: 2 });
    const local = { ...s, scope: 'local' as const };
    expect(localFallback(local, 3)).toBe(local);
  });
});

describe('cluster decisions', () => {
  it('refuses a cost above a capacity before asking Redis', () => {
    const d = costTooBig(entry(spec()), { ...input, cost: { tokens: 1001 } }, 'id');
    expect(d).toMatchObject({
      allowed: false,
      code: 'COST_EXCEEDS_LIMIT',
      limitName: 'tpm',
      limit: 1000,
    });
    expect(d?.reason).toContain('cost.tokens');
    expect(costTooBig(entry(spec()), input, 'id')).toBeUndefined();
  });

  it('describes the refusing limit, or else the one with the least share left', () => {
    const e = entry(spec());
    const admitted = decisionOf(
      e,
      input,
      'id',
      outcome(-1, 0, [
        [2, 100],
        [900, 200],
      ]),
    );
    expect(admitted).toMatchObject({
      allowed: true,
      code: 'OK',
      limitName: 'tpm',
      remaining: 100,
      resetMs: 200,
    });
    const refused = decisionOf(
      e,
      input,
      'id',
      outcome(0, 1234, [
        [10, 5000],
        [100, 200],
      ]),
    );
    expect(refused).toMatchObject({
      allowed: false,
      code: 'RATE_LIMITED',
      limitName: 'rpm',
      remaining: 0,
      retryAfterMs: 1234,
    });
  });

  it('admits a shadow quota and says what would have happened', () => {
    const d = decisionOf(
      entry(spec({ shadow: true })),
      input,
      'id',
      outcome(0, 5, [
        [10, 5],
        [0, 0],
      ]),
    );
    expect(d).toMatchObject({ allowed: true, code: 'OK', shadow: true });
    expect(d.reason).toContain('would be RATE_LIMITED');
  });

  it('names an admission by its receipt unless the caller named it, and gives leases', () => {
    const uses: [number, number][] = [
      [1, 100],
      [100, 100],
    ];
    expect(decisionOf(entry(spec()), input, 'id', outcome(-1, 0, uses)).requestId).toBe('cs-7');
    const named = { ...input, requestId: 'mine' };
    expect(decisionOf(entry(spec()), named, 'mine', outcome(-1, 0, uses)).requestId).toBe('mine');
    const leased = entry(spec({ concurrency: { max: 2, leaseTtlMs: 1000 } }));
    expect(decisionOf(leased, input, 'id', outcome(-1, 0, uses)).leaseId).toBe('cl-7');
    const busy = decisionOf(
      leased,
      input,
      'id',
      outcome(-1, 40, uses, { allowed: false, code: 'CONCURRENCY_LIMITED', inFlight: 2 }),
    );
    expect(busy).toMatchObject({ allowed: false, code: 'CONCURRENCY_LIMITED', retryAfterMs: 40 });
    expect(busy.reason).toBe('concurrency: 2 of 2 in flight');
  });

  it('plans every cluster quota for Redis, leases and calendar windows included', () => {
    const scope = new ClusterScope(
      {} as RedisPool,
      () => {
        throw new Error('unused');
      },
      't.',
    );
    const plan = scope.plan([
      spec(),
      spec({ name: 'leases', concurrency: { max: 1, leaseTtlMs: 1000 } }),
      spec({
        name: 'daily',
        limits: [PACIFIC_DAY],
      }),
      { ...spec(), name: 'local-one', scope: 'local' },
    ]);
    expect([...plan.served.keys()]).toEqual(['q', 'leases', 'daily']);
    expect(plan.served.get('leases')!.concurrency).toEqual({ max: 1, leaseTtlMs: 1000 });
  });

  it('gives Redis calendar boundaries around now, a 23-hour day included', () => {
    const daily = compileQuota(
      spec({
        limits: [PACIFIC_DAY],
      }),
    ).limits[0]!;
    // 2026-03-08 is the spring-forward day in Los Angeles: 23 hours.
    const now = Date.UTC(2026, 2, 8, 20);
    const bounds = calendarBounds(daily.calendar!, now);
    expect(bounds[0]).toBeLessThanOrEqual(now - 2 * 86_400_000);
    expect(bounds[bounds.length - 1]).toBeGreaterThan(now + 3 * 86_400_000);
    const lengths = bounds.slice(1).map((b, i) => (b - bounds[i]!) / 3_600_000);
    expect(lengths).toContain(23);
    expect(lengths.every((h) => h === 23 || h === 24)).toBe(true);
    expect(new Date(bounds[1]!).toISOString()).toBe('2026-03-07T08:00:00.000Z');
    expect(new Date(bounds[3]!).toISOString()).toBe('2026-03-09T07:00:00.000Z');
  });
});
