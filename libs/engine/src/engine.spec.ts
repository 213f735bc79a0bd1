import {
  Engine,
  InvalidQuotaError,
  PendingAcquire,
  type AcquireInput,
  type AlgorithmName,
  type Decision,
  type KeyStats,
  type LimitSpec,
  type QuotaSpec,
} from './index';

// Every test runs on a virtual clock: `now` is a plain number. T0 is a multiple of one minute, so
// fixed windows of 1 s and 60 s start exactly at T0.
const T0 = 1_800_000_000_000;
const MINUTE = 60_000;

function limit(
  name: string,
  max: number,
  windowMs: number,
  algorithm: AlgorithmName = 'fixed_window',
  unit = 'requests',
): LimitSpec {
  return { name, unit, limit: max, windowMs, algorithm };
}

function decision(r: Decision | PendingAcquire): Decision {
  if (r instanceof PendingAcquire) throw new Error(`expected an answer, got waiter ${r.requestId}`);
  return r;
}

function waiter(r: Decision | PendingAcquire): PendingAcquire {
  if (!(r instanceof PendingAcquire)) {
    throw new Error(`expected a waiter, got ${r.code}: ${r.reason}`);
  }
  return r;
}

function stats(engine: Engine, key: string, quota: string | undefined, now: number): KeyStats {
  const out = engine.stats({ key, quota }, now);
  if (!out.ok) throw new Error(`stats refused: ${out.code}`);
  return out.value;
}

/** Used amount per limit name. */
function used(
  engine: Engine,
  key: string,
  quota: string | undefined,
  now: number,
): Record<string, number> {
  return Object.fromEntries(stats(engine, key, quota, now).limits.map((l) => [l.name, l.used]));
}

/** What a host does: advance at every wake-up up to `t`, then to `t`. */
function runUntil(engine: Engine, t: number): void {
  for (let at = engine.nextWakeAt(); at <= t; at = engine.nextWakeAt()) engine.advance(at);
  engine.advance(t);
}

const ZERO = { keys: 0, timers: 0, receipts: 0, remembered: 0, waiters: 0 };

describe('Engine', () => {
  describe('quota resolution', () => {
    const quotas: QuotaSpec[] = [
      { name: 'default', limits: [limit('rps', 100, 1000)] },
      { name: 'api', match: 'api-*', limits: [limit('rps', 10, 1000)] },
      { name: 'api-admin', match: 'api-admin-*', limits: [limit('rps', 10, 1000)] },
      { name: 'users', match: 'user-*', limits: [limit('rps', 10, 1000)] },
      { name: 'vip', match: 're:^user-vip-\\d+$', limits: [limit('rps', 10, 1000)] },
      { name: 'beta', match: 're:-beta$', limits: [limit('rps', 10, 1000)] },
      { name: 'gpt-glob', match: 'gpt-*', limits: [limit('rps', 10, 1000)] },
      { name: 'gpt-4o', match: 'gpt-4o', limits: [limit('rps', 10, 1000)] },
    ];
    const engine = new Engine(quotas, { idPrefix: 't' });

    it.each([
      ['api-1', 'api'],
      ['api-admin-1', 'api-admin'], // longer literal prefix than api-*
      ['user-42', 'users'],
      ['user-vip-7', 'vip'], // regex prefix "user-vip-" beats glob "user-"
      ['user-vip-x', 'users'], // the regex does not match
      ['api-beta', 'api'], // unanchored regex has no literal prefix
      ['x-beta', 'beta'],
      ['gpt-4o', 'gpt-4o'], // exact match beats the glob
      ['gpt-4o-mini', 'gpt-glob'],
      ['something-else', 'default'],
    ])('key %s resolves to quota %s', (key, expected) => {
      expect(engine.resolve(undefined, key)?.name).toBe(expected);
      expect(decision(engine.acquire({ key }, T0)).quota).toBe(expected);
    });

    it('resolves keys that made backtracking patterns run for minutes, in linear time', () => {
      // With V8's RegExp, the first key held the event loop for hours, the second for minutes.
      const hostile = new Engine([
        { name: 'default', limits: [limit('rps', 100, 1000)] },
        { name: 'nested', match: 're:^(a+)+$', limits: [limit('rps', 10, 1000)] },
        { name: 'stars', match: `*${'x*'.repeat(30)}y`, limits: [limit('rps', 10, 1000)] },
      ]);
      expect(hostile.resolve(undefined, `${'a'.repeat(40)}!`)?.name).toBe('default');
      expect(hostile.resolve(undefined, 'x'.repeat(200))?.name).toBe('default');
      expect(hostile.resolve(undefined, 'a'.repeat(40))?.name).toBe('nested');
      expect(hostile.resolve(undefined, `${'x'.repeat(40)}y`)?.name).toBe('stars');
    });

    it('resolves by the new patterns after a change of match', () => {
      const changing = new Engine([
        { name: 'default', limits: [limit('rps', 100, 1000)] },
        { name: 'r', match: 're:^a-', limits: [limit('rps', 10, 1000)] },
        { name: 'g', match: 'b-*', limits: [limit('rps', 10, 1000)] },
      ]);
      expect(changing.resolve(undefined, 'a-1')?.name).toBe('r');
      changing.setQuotas(
        [
          { name: 'default', limits: [limit('rps', 100, 1000)] },
          { name: 'r', match: 're:^c-', limits: [limit('rps', 10, 1000)] },
          { name: 'g', match: 'b-*', limits: [limit('rps', 10, 1000)] },
          { name: 'h', match: 're:^a-', limits: [limit('rps', 10, 1000)] },
        ],
        T0,
      );
      expect(changing.resolve(undefined, 'a-1')?.name).toBe('h');
      expect(changing.resolve(undefined, 'c-1')?.name).toBe('r');
      expect(changing.resolve(undefined, 'b-1')?.name).toBe('g');
    });

    it('uses the named quota even when another one matches the key', () => {
      const d = decision(engine.acquire({ key: 'api-1', quota: 'vip' }, T0));
      expect(d).toMatchObject({ allowed: true, code: 'OK', quota: 'vip' });
    });

    it('answers UNKNOWN_QUOTA for a named quota that does not exist, never the default', () => {
      const d = decision(engine.acquire({ key: 'api-1', quota: 'nope' }, T0));
      expect(d).toMatchObject({ allowed: false, code: 'UNKNOWN_QUOTA', quota: 'nope' });
      expect(d.reason).toContain('"nope"');
      expect(engine.stats({ key: 'api-1', quota: 'nope' }, T0)).toMatchObject({
        ok: false,
        code: 'UNKNOWN_QUOTA',
      });
    });

    it('answers UNKNOWN_QUOTA when nothing matches and there is no default', () => {
      const bare = new Engine([quotas[1]!]);
      expect(decision(bare.acquire({ key: 'other' }, T0))).toMatchObject({
        allowed: false,
        code: 'UNKNOWN_QUOTA',
      });
      expect(decision(bare.acquire({ key: 'api-1' }, T0))).toMatchObject({
        allowed: true,
        quota: 'api',
      });
      expect(bare.footprint().keys).toBe(1);
    });
  });

  describe('several limits: all or nothing', () => {
    const llm: QuotaSpec = {
      name: 'llm',
      match: '*',
      limits: [limit('rpm', 3, MINUTE), limit('tpm', 1000, MINUTE, 'fixed_window', 'tokens')],
      queue: { maxSize: 10, maxWaitMs: 5 * MINUTE },
    };

    it('charges every limit or none, and reports the binding limit', () => {
      const engine = new Engine([llm]);
      const a = decision(engine.acquire({ key: 'k', cost: { requests: 1, tokens: 600 } }, T0));
      // rpm has 2/3 left, tpm 400/1000: tpm binds.
      expect(a).toMatchObject({
        allowed: true,
        code: 'OK',
        limitName: 'tpm',
        limit: 1000,
        remaining: 400,
      });
      expect(a.resetMs).toBe(MINUTE);

      const b = decision(engine.acquire({ key: 'k', cost: { requests: 1, tokens: 500 } }, T0 + 1));
      expect(b).toMatchObject({
        allowed: false,
        code: 'RATE_LIMITED',
        limitName: 'tpm',
        remaining: 400,
      });
      expect(b.retryAfterMs).toBe(MINUTE - 1);
      expect(used(engine, 'k', 'llm', T0 + 1)).toEqual({ rpm: 1, tpm: 600 });

      expect(decision(engine.acquire({ key: 'k', cost: { tokens: 400 } }, T0 + 2)).allowed).toBe(
        true,
      );
      expect(decision(engine.acquire({ key: 'k', cost: 1 }, T0 + 3)).allowed).toBe(true);
      expect(used(engine, 'k', 'llm', T0 + 3)).toEqual({ rpm: 3, tpm: 1000 });

      // A request costing no tokens is still refused by rpm, and tpm stays as it was.
      const c = decision(engine.acquire({ key: 'k', cost: { tokens: 0 } }, T0 + 4));
      expect(c).toMatchObject({ code: 'RATE_LIMITED', limitName: 'rpm', remaining: 0, limit: 3 });
      expect(used(engine, 'k', 'llm', T0 + 4)).toEqual({ rpm: 3, tpm: 1000 });
    });

    it('skips a limit of 0 (unlimited)', () => {
      const engine = new Engine([
        {
          name: 'q',
          match: '*',
          limits: [limit('rpm', 0, MINUTE), limit('tpm', 100, MINUTE, 'fixed_window', 'tokens')],
        },
      ]);
      for (let i = 0; i < 50; i++) {
        expect(decision(engine.acquire({ key: 'k', cost: { tokens: 2 } }, T0 + i)).allowed).toBe(
          true,
        );
      }
      expect(decision(engine.acquire({ key: 'k', cost: { tokens: 1 } }, T0 + 50)).code).toBe(
        'RATE_LIMITED',
      );
      expect(stats(engine, 'k', 'q', T0 + 50).limits.map((l) => [l.name, l.used])).toEqual([
        ['tpm', 100],
      ]);
    });

    it('refuses a cost above a capacity with COST_EXCEEDS_LIMIT, never queued, nothing charged', () => {
      const engine = new Engine([llm]);
      const d = decision(engine.acquire({ key: 'k', cost: { tokens: 1001 }, wait: true }, T0));
      expect(d).toMatchObject({
        allowed: false,
        code: 'COST_EXCEEDS_LIMIT',
        limitName: 'tpm',
        limit: 1000,
      });
      expect(d.reason).toContain('cost.tokens');
      expect(engine.footprint().waiters).toBe(0);
      expect(used(engine, 'k', 'llm', T0)).toEqual({ rpm: 0, tpm: 0 });
    });

    it.each([
      ['before now', T0 - 1],
      ['equal to now', T0],
    ])('refuses a deadline %s with WAIT_TIMEOUT and charges nothing', (_label, deadline) => {
      const engine = new Engine([llm]);
      for (const wait of [false, true]) {
        const d = decision(engine.acquire({ key: 'k', cost: { tokens: 1 }, wait, deadline }, T0));
        expect(d).toMatchObject({ allowed: false, code: 'WAIT_TIMEOUT' });
      }
      expect(engine.footprint()).toEqual(ZERO);
      expect(used(engine, 'k', 'llm', T0)).toEqual({ rpm: 0, tpm: 0 });
    });
  });

  describe('FIFO wait queue', () => {
    const queued = (max: number, windowMs: number, maxSize = 3, maxWaitMs = 5000): QuotaSpec => ({
      name: 'q',
      match: '*',
      limits: [limit('rps', max, windowMs)],
      queue: { maxSize, maxWaitMs },
    });

    it('admits waiters in arrival order as windows reset, and refuses beyond maxSize', () => {
      const engine = new Engine([queued(2, 1000)]);
      expect(decision(engine.acquire({ key: 'k' }, T0)).allowed).toBe(true);
      expect(decision(engine.acquire({ key: 'k' }, T0)).allowed).toBe(true);
      const [c, d, e] = ['c', 'd', 'e'].map((id, i) =>
        waiter(engine.acquire({ key: 'k', requestId: id, wait: true }, T0 + 10 * i)),
      );
      const full = decision(engine.acquire({ key: 'k', wait: true }, T0 + 30));
      expect(full).toMatchObject({ allowed: false, code: 'QUEUE_FULL' });
      expect(full.retryAfterMs).toBeGreaterThanOrEqual(1);
      expect(stats(engine, 'k', 'q', T0 + 30).queued).toBe(3);

      runUntil(engine, T0 + 999);
      expect(c!.settled).toBeUndefined();
      runUntil(engine, T0 + 1000);
      expect(c!.settled).toMatchObject({
        code: 'OK',
        requestId: 'c',
        waitedMs: 1000,
        remaining: 1,
      });
      expect(d!.settled).toMatchObject({ code: 'OK', requestId: 'd', waitedMs: 990, remaining: 0 });
      expect(e!.settled).toBeUndefined();

      runUntil(engine, T0 + 1999);
      expect(e!.settled).toBeUndefined();
      runUntil(engine, T0 + 2000);
      expect(e!.settled).toMatchObject({ code: 'OK', requestId: 'e', waitedMs: 1980 });
      expect(stats(engine, 'k', 'q', T0 + 2000)).toMatchObject({
        queued: 0,
        limits: [{ used: 1 }],
      });
    });

    it.each([
      ['the quota maxWaitMs', undefined, undefined, 3000],
      ['a shorter request maxWaitMs', 1000, undefined, 1000],
      ['the quota cap over a longer request maxWaitMs', 99_999, undefined, 3000],
      ['an earlier request deadline', undefined, T0 + 500, 500],
    ])('times a waiter out at %s', (_label, maxWaitMs, deadline, expected) => {
      const engine = new Engine([queued(1, 10_000, 5, 3000)]);
      decision(engine.acquire({ key: 'k' }, T0));
      const w = waiter(engine.acquire({ key: 'k', wait: true, maxWaitMs, deadline }, T0));
      runUntil(engine, T0 + expected - 1);
      expect(w.settled).toBeUndefined();
      runUntil(engine, T0 + expected);
      expect(w.settled).toMatchObject({ allowed: false, code: 'WAIT_TIMEOUT', waitedMs: expected });
      expect(stats(engine, 'k', 'q', T0 + expected)).toMatchObject({
        queued: 0,
        limits: [{ used: 1 }],
      });
    });

    it('cancel leaves the queue and lets the next waiter in', () => {
      const engine = new Engine([queued(1, 1000)]);
      decision(engine.acquire({ key: 'k' }, T0));
      const b = waiter(engine.acquire({ key: 'k', wait: true }, T0));
      const c = waiter(engine.acquire({ key: 'k', wait: true }, T0));
      expect(b.cancel(T0 + 10)).toBe(true);
      expect(b.cancel(T0 + 11)).toBe(false);
      expect(b.settled).toMatchObject({ code: 'WAIT_TIMEOUT', waitedMs: 10 });
      expect(stats(engine, 'k', 'q', T0 + 10).queued).toBe(1);
      runUntil(engine, T0 + 999);
      expect(c.settled).toBeUndefined();
      runUntil(engine, T0 + 1000);
      expect(c.settled).toMatchObject({ code: 'OK', waitedMs: 1000 });
      expect(c.cancel(T0 + 1001)).toBe(false);
    });

    it('cancelling a big head waiter admits the small one behind it at once', () => {
      const engine = new Engine([queued(5, 1000)]);
      decision(engine.acquire({ key: 'k', cost: 3 }, T0));
      const big = waiter(engine.acquire({ key: 'k', cost: 5, wait: true }, T0));
      const small = waiter(engine.acquire({ key: 'k', cost: 1, wait: true }, T0));
      expect(small.settled).toBeUndefined(); // 2 are left, but the big one is ahead
      big.cancel(T0 + 7);
      expect(small.settled).toMatchObject({ code: 'OK', waitedMs: 7 });
      expect(used(engine, 'k', 'q', T0 + 7)).toEqual({ rps: 4 });
    });

    it('strict FIFO: nobody overtakes a waiter, even a request that would fit', () => {
      const engine = new Engine([queued(5, 1000)]);
      decision(engine.acquire({ key: 'k', cost: 3 }, T0));
      const big = waiter(engine.acquire({ key: 'k', cost: 5, wait: true }, T0));
      const plain = decision(engine.acquire({ key: 'k', cost: 1 }, T0 + 1));
      expect(plain).toMatchObject({
        allowed: false,
        code: 'RATE_LIMITED',
        reason: 'requests are waiting ahead',
      });
      // The big one takes all of the next window; the small one fits in the one after.
      expect(plain.retryAfterMs).toBe(2000 - 1);
      const small = waiter(engine.acquire({ key: 'k', cost: 1, wait: true }, T0 + 2));
      expect(used(engine, 'k', 'q', T0 + 2)).toEqual({ rps: 3 });

      engine.advance(T0 + 1000);
      expect(big.settled).toMatchObject({ code: 'OK', waitedMs: 1000, remaining: 0 });
      expect(small.settled).toBeUndefined();
      runUntil(engine, T0 + 2000);
      expect(small.settled).toMatchObject({ code: 'OK', waitedMs: 1998 });
    });

    it('a release admits a waiter immediately', () => {
      const engine = new Engine([queued(2, 1000)]);
      const a = decision(engine.acquire({ key: 'k' }, T0));
      decision(engine.acquire({ key: 'k' }, T0));
      const c = waiter(engine.acquire({ key: 'k', wait: true }, T0));
      expect(engine.release({ key: 'k', requestId: a.requestId }, T0 + 5)).toEqual({
        ok: true,
        value: true,
      });
      expect(c.settled).toMatchObject({ code: 'OK', waitedMs: 5 });
      // The admitted waiter can be released by the id it was answered with.
      const released = engine.release({ key: 'k', requestId: c.settled?.requestId }, T0 + 6);
      expect(released).toEqual({ ok: true, value: true });
      expect(used(engine, 'k', 'q', T0 + 6)).toEqual({ rps: 1 });
    });

    it('a usage refund admits a waiter immediately', () => {
      const engine = new Engine([
        {
          name: 'q',
          match: '*',
          limits: [limit('tpm', 100, MINUTE, 'fixed_window', 'tokens')],
          queue: { maxSize: 5, maxWaitMs: MINUTE },
        },
      ]);
      const a = decision(engine.acquire({ key: 'k', cost: { tokens: 80 } }, T0));
      const b = waiter(engine.acquire({ key: 'k', cost: { tokens: 50 }, wait: true }, T0));
      engine.usage({ key: 'k', requestId: a.requestId, cost: { tokens: 30 } }, T0 + 9);
      expect(b.settled).toMatchObject({ code: 'OK', waitedMs: 9 });
      expect(used(engine, 'k', 'q', T0 + 9)).toEqual({ tpm: 80 });
    });
  });

  describe('concurrency leases', () => {
    const conc: QuotaSpec = {
      name: 'c',
      match: '*',
      limits: [limit('rps', 100, 1000)],
      concurrency: { max: 2, leaseTtlMs: 30_000 },
      queue: { maxSize: 5, maxWaitMs: MINUTE },
    };

    it('holds at most max in flight; release by leaseId and by requestId', () => {
      const engine = new Engine([conc]);
      const a = decision(engine.acquire({ key: 'k' }, T0));
      const b = decision(engine.acquire({ key: 'k', requestId: 'b' }, T0));
      expect(a.leaseId).toEqual(expect.any(String));
      expect(b.leaseId).not.toBe(a.leaseId);
      const c = decision(engine.acquire({ key: 'k' }, T0 + 100));
      expect(c).toMatchObject({
        allowed: false,
        code: 'CONCURRENCY_LIMITED',
        retryAfterMs: 29_900,
      });
      expect(stats(engine, 'k', 'c', T0 + 100)).toMatchObject({
        inFlight: 2,
        limits: [{ used: 2 }],
      });

      expect(engine.release({ key: 'k', leaseId: a.leaseId }, T0 + 200)).toEqual({
        ok: true,
        value: true,
      });
      expect(engine.release({ key: 'k', leaseId: a.leaseId }, T0 + 200)).toEqual({
        ok: true,
        value: false,
      });
      expect(decision(engine.acquire({ key: 'k' }, T0 + 300)).allowed).toBe(true);
      expect(engine.release({ key: 'k', requestId: 'b' }, T0 + 400)).toEqual({
        ok: true,
        value: true,
      });
      expect(engine.release({ key: 'k', requestId: 'b' }, T0 + 400)).toEqual({
        ok: true,
        value: false,
      });
      // Freeing a lease does not give back the rate-limit charge.
      expect(stats(engine, 'k', 'c', T0 + 400)).toMatchObject({
        inFlight: 1,
        limits: [{ used: 3 }],
      });
    });

    it('frees a lease when its TTL passes', () => {
      const engine = new Engine([conc]);
      decision(engine.acquire({ key: 'k' }, T0));
      decision(engine.acquire({ key: 'k' }, T0 + 10));
      expect(decision(engine.acquire({ key: 'k' }, T0 + 29_999)).code).toBe('CONCURRENCY_LIMITED');
      expect(decision(engine.acquire({ key: 'k' }, T0 + 30_000)).code).toBe('OK');
      expect(stats(engine, 'k', 'c', T0 + 30_000).inFlight).toBe(2);
      expect(stats(engine, 'k', 'c', T0 + 30_010).inFlight).toBe(1);
    });

    it('admits a waiter when a lease is released or expires', () => {
      const engine = new Engine([conc]);
      const a = decision(engine.acquire({ key: 'k' }, T0));
      decision(engine.acquire({ key: 'k' }, T0 + 1000));
      const w1 = waiter(engine.acquire({ key: 'k', wait: true }, T0 + 1000));
      const w2 = waiter(engine.acquire({ key: 'k', wait: true }, T0 + 1000));
      engine.release({ key: 'k', leaseId: a.leaseId }, T0 + 1500);
      expect(w1.settled).toMatchObject({ code: 'OK', waitedMs: 500 });
      expect(w1.settled?.leaseId).toEqual(expect.any(String));
      expect(w2.settled).toBeUndefined();
      // The lease taken at T0 + 1000 expires at T0 + 31 000.
      runUntil(engine, T0 + 30_999);
      expect(w2.settled).toBeUndefined();
      runUntil(engine, T0 + 31_000);
      expect(w2.settled).toMatchObject({ code: 'OK', waitedMs: 30_000 });
    });
  });

  describe('release of a plain request (GoCC)', () => {
    it.each<AlgorithmName>(['fixed_window', 'sliding_window', 'token_bucket'])(
      '%s: gives the cost back in the same window, once',
      (algorithm) => {
        const engine = new Engine([
          { name: 'q', match: '*', limits: [limit('rps', 2, 1000, algorithm)] },
        ]);
        const a = decision(engine.acquire({ key: 'k' }, T0));
        decision(engine.acquire({ key: 'k', requestId: 'mine' }, T0));
        expect(decision(engine.acquire({ key: 'k' }, T0 + 50)).code).toBe('RATE_LIMITED');
        expect(engine.release({ key: 'k', requestId: a.requestId }, T0 + 60)).toEqual({
          ok: true,
          value: true,
        });
        expect(engine.release({ key: 'k', requestId: a.requestId }, T0 + 61)).toEqual({
          ok: true,
          value: false,
        });
        expect(engine.release({ key: 'k', requestId: 'mine' }, T0 + 62)).toEqual({
          ok: true,
          value: true,
        });
        expect(engine.release({ key: 'k', requestId: 'mine' }, T0 + 63)).toEqual({
          ok: true,
          value: false,
        });
        expect(used(engine, 'k', 'q', T0 + 63)).toEqual({ rps: 0 });
        expect(decision(engine.acquire({ key: 'k', cost: 2 }, T0 + 64)).allowed).toBe(true);
      },
    );

    it('does not give back a charge of an earlier window', () => {
      const engine = new Engine([{ name: 'q', match: '*', limits: [limit('rps', 2, 1000)] }]);
      const a = decision(engine.acquire({ key: 'k' }, T0 + 900));
      decision(engine.acquire({ key: 'k' }, T0 + 1100));
      decision(engine.acquire({ key: 'k' }, T0 + 1100));
      // The receipt is found (true), but its window is over: the current one keeps its count.
      expect(engine.release({ key: 'k', requestId: a.requestId }, T0 + 1200)).toEqual({
        ok: true,
        value: true,
      });
      expect(used(engine, 'k', 'q', T0 + 1200)).toEqual({ rps: 2 });
      expect(decision(engine.acquire({ key: 'k' }, T0 + 1200)).code).toBe('RATE_LIMITED');
    });

    it.each<[string, { key: string; quota?: string; requestId?: string; leaseId?: string }]>([
      ['an unknown requestId', { key: 'k', requestId: 'never-seen' }],
      ['a forged generated id', { key: 'k', requestId: 'xx0aZZZZ' }],
      ['another key', { key: 'other', requestId: 'r' }],
      ['no id at all', { key: 'k' }],
      ['a leaseId on a quota without concurrency', { key: 'k', leaseId: 'l' }],
    ])('answers false for %s', (_label, input) => {
      const engine = new Engine([{ name: 'default', limits: [limit('rps', 2, 1000)] }]);
      decision(engine.acquire({ key: 'k', requestId: 'r' }, T0));
      expect(engine.release(input, T0 + 1)).toEqual({ ok: true, value: false });
      expect(used(engine, 'k', undefined, T0 + 1)).toEqual({ rps: 1 });
    });

    it('answers UNKNOWN_QUOTA for a release under a quota that does not exist', () => {
      const engine = new Engine([{ name: 'default', limits: [limit('rps', 2, 1000)] }]);
      expect(engine.release({ key: 'k', quota: 'x', requestId: 'r' }, T0)).toMatchObject({
        ok: false,
        code: 'UNKNOWN_QUOTA',
      });
    });
  });

  describe('usage', () => {
    const llm: QuotaSpec = {
      name: 'llm',
      match: '*',
      limits: [limit('rpm', 10, MINUTE), limit('tpm', 1000, MINUTE, 'fixed_window', 'tokens')],
    };

    it('settles an admitted request to its actual cost: refund, then extra charge', () => {
      const engine = new Engine([llm]);
      decision(
        engine.acquire({ key: 'k', requestId: 'r1', cost: { requests: 1, tokens: 500 } }, T0),
      );
      const refund = engine.usage(
        { key: 'k', requestId: 'r1', cost: { requests: 1, tokens: 200 } },
        T0 + 1,
      );
      expect(refund.ok && refund.value.limits.map((l) => l.used)).toEqual([1, 200]);
      const extra = engine.usage({ key: 'k', requestId: 'r1', cost: { tokens: 900 } }, T0 + 2);
      expect(extra.ok && extra.value.limits.map((l) => l.used)).toEqual([1, 900]);
      expect(used(engine, 'k', 'llm', T0 + 2)).toEqual({ rpm: 1, tpm: 900 });
    });

    it('records usage without a requestId (requests default to 1) and delays later admissions', () => {
      const engine = new Engine([llm]);
      decision(engine.acquire({ key: 'k', cost: { tokens: 900 } }, T0));
      const out = engine.usage({ key: 'k', cost: { tokens: 300 } }, T0 + 10);
      expect(out).toMatchObject({
        ok: true,
        value: { limits: [{ used: 2 }, { used: 1200, remaining: 0 }] },
      });
      const d = decision(engine.acquire({ key: 'k', cost: { tokens: 1 } }, T0 + 20));
      expect(d).toMatchObject({
        code: 'RATE_LIMITED',
        limitName: 'tpm',
        remaining: 0,
        retryAfterMs: MINUTE - 20,
      });
      expect(
        decision(engine.acquire({ key: 'k', cost: { tokens: 1000 } }, T0 + MINUTE)).allowed,
      ).toBe(true);
    });

    it('records usage above the limit on a sliding window until it slides out', () => {
      const engine = new Engine([
        { name: 's', match: '*', limits: [limit('tpm', 100, MINUTE, 'sliding_window', 'tokens')] },
      ]);
      engine.usage({ key: 'k', cost: { tokens: 250 } }, T0);
      // Sub-buckets of 6 s are counted whole: the charge at T0 counts until its bucket
      // [T0, T0 + 6 s) has wholly slid out, at T0 + 66 s (never early, at most one bucket late).
      const d = decision(engine.acquire({ key: 'k', cost: { tokens: 1 } }, T0 + 30_000));
      expect(d).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 36_000 });
      expect(decision(engine.acquire({ key: 'k', cost: { tokens: 1 } }, T0 + 65_999)).allowed).toBe(
        false,
      );
      expect(
        decision(engine.acquire({ key: 'k', cost: { tokens: 100 } }, T0 + 66_000)).allowed,
      ).toBe(true);
    });
  });

  describe('idempotency', () => {
    const q: QuotaSpec = {
      name: 'q',
      match: '*',
      limits: [limit('r', 5, 10 * MINUTE)],
      queue: { maxSize: 5, maxWaitMs: MINUTE },
    };

    it('gives the same answer within 60 s and charges once; after 60 s it is a new request', () => {
      const engine = new Engine([q]);
      const first = decision(engine.acquire({ key: 'k', requestId: 'x' }, T0));
      expect(first).toMatchObject({ allowed: true, requestId: 'x', remaining: 4 });
      expect(decision(engine.acquire({ key: 'k', requestId: 'x' }, T0 + 59_999))).toEqual(first);
      expect(used(engine, 'k', 'q', T0 + 59_999)).toEqual({ r: 1 });
      // The same id on another key is another request.
      expect(decision(engine.acquire({ key: 'other', requestId: 'x' }, T0 + 1)).remaining).toBe(4);
      const again = decision(engine.acquire({ key: 'k', requestId: 'x' }, T0 + 60_000));
      expect(again).toMatchObject({ allowed: true, remaining: 3 });
      expect(used(engine, 'k', 'q', T0 + 60_000)).toEqual({ r: 2 });
    });

    it('repeats a refusal and returns the same waiter', () => {
      const engine = new Engine([q]);
      decision(engine.acquire({ key: 'k', cost: 5 }, T0));
      const no = decision(engine.acquire({ key: 'k', requestId: 'n' }, T0));
      expect(no.code).toBe('RATE_LIMITED');
      engine.usage({ key: 'k', cost: 0 }, T0); // nothing changes the window
      expect(decision(engine.acquire({ key: 'k', requestId: 'n' }, T0 + 100))).toEqual(no);
      const w = waiter(engine.acquire({ key: 'k', requestId: 'w', wait: true }, T0 + 200));
      const repeat = waiter(engine.acquire({ key: 'k', requestId: 'w', wait: true }, T0 + 300));
      expect(repeat).not.toBe(w);
      expect(repeat.requestId).toBe('w');
      expect(engine.footprint().waiters).toBe(1);
    });

    it('a caller repeating a waiting requestId waits on its own handle: one leaving keeps the other', () => {
      const engine = new Engine([{ ...q, limits: [limit('r', 1, 1000)] }]);
      decision(engine.acquire({ key: 'k' }, T0));
      const first = waiter(engine.acquire({ key: 'k', requestId: 'w', wait: true }, T0 + 10));
      const second = waiter(engine.acquire({ key: 'k', requestId: 'w', wait: true }, T0 + 20));
      expect(first.cancel(T0 + 30)).toBe(true);
      expect(first.settled).toMatchObject({ code: 'WAIT_TIMEOUT', requestId: 'w', waitedMs: 20 });
      expect(second.settled).toBeUndefined();
      expect(engine.footprint().waiters).toBe(1);
      runUntil(engine, T0 + 1000);
      expect(second.settled).toMatchObject({ allowed: true, requestId: 'w', waitedMs: 990 });
      expect(used(engine, 'k', 'q', T0 + 1000)).toEqual({ r: 1 });
      // Answered: a third repeat gets the same answer, and a late cancel changes nothing.
      expect(decision(engine.acquire({ key: 'k', requestId: 'w', wait: true }, T0 + 1001))).toEqual(
        second.settled,
      );
      expect(second.cancel(T0 + 1002)).toBe(false);
    });

    it('the last caller of a shared wait leaving takes it out of the queue', () => {
      const engine = new Engine([{ ...q, limits: [limit('r', 1, 1000)] }]);
      decision(engine.acquire({ key: 'k' }, T0));
      const first = waiter(engine.acquire({ key: 'k', requestId: 'w', wait: true }, T0 + 10));
      const second = waiter(engine.acquire({ key: 'k', requestId: 'w', wait: true }, T0 + 20));
      const behind = waiter(engine.acquire({ key: 'k', wait: true }, T0 + 30));
      expect(second.cancel(T0 + 40)).toBe(true);
      expect(first.cancel(T0 + 50)).toBe(true);
      expect(engine.footprint().waiters).toBe(1);
      runUntil(engine, T0 + 1000);
      expect(behind.settled).toMatchObject({ allowed: true, waitedMs: 970 });
      // The repeat after both left is told what the wait came to.
      const again = engine.acquire({ key: 'k', requestId: 'w', wait: true }, T0 + 1001);
      expect(decision(again)).toMatchObject({ code: 'WAIT_TIMEOUT', requestId: 'w' });
    });

    it('a requestId used again after the idempotency window is swept in time order', () => {
      const engine = new Engine([{ ...q, limits: [limit('r', 1_000_000, MINUTE)] }], {
        shards: 1,
        idempotencyTtlMs: 1000,
        receiptTtlMs: 10_000,
      });
      decision(engine.acquire({ key: 'k', requestId: 'again' }, T0));
      for (let i = 0; i < 50; i++)
        decision(engine.acquire({ key: 'k', requestId: `r${i}` }, T0 + 1));
      // A new request under the same id once its answer is forgotten: its receipt is rewritten.
      decision(engine.acquire({ key: 'k', requestId: 'again' }, T0 + 5000));
      engine.advance(T0 + 5000 + 10_000 - 1);
      // Only 'again' (issued at T0 + 5000) is still remembered; r0..r49 were issued at T0 + 1.
      expect(engine.footprint().remembered).toBe(1);
      engine.advance(T0 + 5000 + 10_000);
      expect(engine.footprint().remembered).toBe(0);
    });

    it('remembers a bounded number of requestIds at any rate of new ones', () => {
      const engine = new Engine([{ ...q, limits: [limit('r', 1_000_000, MINUTE)] }], {
        shards: 1,
        idempotencyCapacity: 100,
        receiptCapacity: 256,
      });
      // A client that sends a new id with every request, all inside one idempotency window.
      for (let i = 0; i < 10_000; i++)
        decision(engine.acquire({ key: 'k', requestId: `r${i}` }, T0 + i / 10));
      expect(engine.footprint().remembered).toBe(100);
      // The newest ids still work: a repeat gets its first answer, and release finds the receipt.
      const first = decision(engine.acquire({ key: 'k', requestId: 'r9999' }, T0 + 1000));
      expect(first).toMatchObject({ allowed: true, requestId: 'r9999' });
      expect(used(engine, 'k', 'q', T0 + 1000)).toEqual({ r: 10_000 });
      expect(engine.release({ key: 'k', requestId: 'r9999' }, T0 + 1000)).toEqual({
        ok: true,
        value: true,
      });
    });
  });

  describe('decide', () => {
    const multi: QuotaSpec = {
      name: 'm',
      match: '*',
      limits: [limit('rps', 3, 1000), limit('tpm', 100, MINUTE, 'sliding_window', 'tokens')],
      queue: { maxSize: 5, maxWaitMs: MINUTE },
    };
    const conc: QuotaSpec = {
      name: 'c',
      match: '*',
      limits: [limit('rps', 2, 1000)],
      concurrency: { max: 1, leaseTtlMs: 5000 },
    };
    const cases: [string, QuotaSpec, AcquireInput[], AcquireInput][] = [
      ['a fresh key', multi, [], { key: 'k', cost: { tokens: 10 } }],
      [
        'a used key',
        multi,
        [{ key: 'k', cost: { tokens: 60 } }],
        { key: 'k', cost: { tokens: 30 } },
      ],
      [
        'a refusal by tokens',
        multi,
        [{ key: 'k', cost: { tokens: 90 } }],
        { key: 'k', cost: { tokens: 30 } },
      ],
      ['a refusal by requests', multi, [{ key: 'k', cost: 3 }], { key: 'k', cost: { tokens: 1 } }],
      ['a cost above capacity', multi, [], { key: 'k', cost: { tokens: 101 } }],
      ['a past deadline', multi, [], { key: 'k', deadline: T0 - 1 }],
      [
        'a waiter ahead',
        multi,
        [
          { key: 'k', cost: 3 },
          { key: 'k', wait: true },
        ],
        { key: 'k', cost: { tokens: 1 } },
      ],
      ['a concurrency refusal', conc, [{ key: 'k' }], { key: 'k' }],
      ['concurrency and rate both refusing', conc, [{ key: 'k', cost: 2 }], { key: 'k' }],
    ];

    it.each(cases)(
      'on %s answers as acquire would and leaves no trace',
      (_label, quota, setup, input) => {
        const engine = new Engine([quota]);
        for (const s of setup) engine.acquire(s, T0);
        const now = T0 + 10;
        const before = { footprint: engine.footprint(), stats: stats(engine, 'k', undefined, now) };
        const decided = engine.decide({ ...input, quota: quota.name }, now);
        expect(engine.footprint()).toEqual(before.footprint);
        expect(stats(engine, 'k', undefined, now)).toEqual(before.stats);
        expect(engine.decide({ ...input, quota: quota.name }, now)).toEqual({
          ...decided,
          requestId: expect.any(String),
        });

        const acquired = decision(engine.acquire({ ...input, quota: quota.name }, now));
        const fields = [
          'allowed',
          'code',
          'limit',
          'remaining',
          'resetMs',
          'retryAfterMs',
          'limitName',
          'shadow',
        ] as const;
        const pick = (d: Decision) => Object.fromEntries(fields.map((f) => [f, d[f]]));
        expect(pick(decided)).toEqual(pick(acquired));
      },
    );

    it('counts only live leases, as acquire does, when the host runs late', () => {
      const spec = (max: number): QuotaSpec => ({
        ...conc,
        concurrency: { max, leaseTtlMs: 5000 },
      });
      const engine = new Engine([spec(2)]);
      decision(engine.acquire({ key: 'k' }, T0)); // expires at T0 + 5000
      decision(engine.acquire({ key: 'k' }, T0 + 1000)); // expires at T0 + 6000
      engine.setQuotas([spec(1)], T0 + 1000);
      // No advance at T0 + 5000: the first lease is expired but still held.
      const decided = engine.decide({ key: 'k' }, T0 + 5500);
      expect(decided).toMatchObject({ code: 'CONCURRENCY_LIMITED', retryAfterMs: 500 });
      expect(decision(engine.acquire({ key: 'k' }, T0 + 5500))).toMatchObject({
        code: 'CONCURRENCY_LIMITED',
        retryAfterMs: 500,
      });
    });

    it('never waits', () => {
      const engine = new Engine([multi]);
      engine.acquire({ key: 'k', cost: 3 }, T0);
      expect(engine.decide({ key: 'k', wait: true }, T0)).toMatchObject({
        allowed: false,
        code: 'RATE_LIMITED',
      });
      expect(engine.footprint().waiters).toBe(0);
    });
  });

  describe('shadow quotas', () => {
    it('always admits, says what would have happened, and charges only what would be admitted', () => {
      const engine = new Engine([
        {
          name: 's',
          match: '*',
          limits: [limit('rps', 1, 1000)],
          shadow: true,
          queue: { maxSize: 5, maxWaitMs: 5000 },
        },
      ]);
      const a = decision(engine.acquire({ key: 'k' }, T0));
      expect(a).toMatchObject({ allowed: true, code: 'OK', shadow: false });
      const b = decision(engine.acquire({ key: 'k', wait: true }, T0 + 1));
      expect(b).toMatchObject({
        allowed: true,
        code: 'OK',
        shadow: true,
        reason: 'shadow: would be RATE_LIMITED',
      });
      expect(b.retryAfterMs).toBe(999);
      expect(engine.decide({ key: 'k' }, T0 + 2)).toMatchObject({ allowed: true, shadow: true });
      const big = decision(engine.acquire({ key: 'k', cost: 2 }, T0 + 3));
      // A cost above a limit's capacity is refused by a limit too: shadow admits it and says so.
      expect(big).toMatchObject({ allowed: true, code: 'OK', shadow: true });
      expect(big.reason).toMatch(
        /^shadow: would be COST_EXCEEDS_LIMIT \(cost\.requests: 2 exceeds/,
      );
      expect(stats(engine, 'k', 's', T0 + 3)).toMatchObject({
        approved: 1,
        denied: 1,
        queued: 0,
        limits: [{ used: 1 }],
      });
    });
  });

  describe('live quota changes', () => {
    const q = (
      max: number,
      algorithm: AlgorithmName = 'fixed_window',
      extra: Partial<QuotaSpec> = {},
    ): QuotaSpec => ({
      name: 'q',
      match: '*',
      limits: [limit('rps', max, 1000, algorithm)],
      ...extra,
    });

    it('keeps counts and enforces a lowered limit at once', () => {
      const engine = new Engine([q(5)]);
      for (let i = 0; i < 3; i++) decision(engine.acquire({ key: 'k' }, T0));
      engine.setQuotas([q(10)], T0 + 1);
      expect(stats(engine, 'k', 'q', T0 + 1).limits).toEqual([
        { name: 'rps', unit: 'requests', limit: 10, used: 3, remaining: 7, resetMs: 999 },
      ]);
      engine.setQuotas([q(2)], T0 + 2);
      expect(decision(engine.acquire({ key: 'k' }, T0 + 3))).toMatchObject({
        code: 'RATE_LIMITED',
        remaining: 0,
      });
      expect(decision(engine.acquire({ key: 'k' }, T0 + 1000)).allowed).toBe(true);
    });

    it.each<[AlgorithmName, boolean]>([
      ['fixed_window', false],
      ['sliding_window', false],
      // A bucket keeps the tokens it had (2 of 5), within the new burst of 2.
      ['token_bucket', true],
    ])('%s: after lowering 5 to 2 with 3 used, 2 more are admitted: %s', (algorithm, admitted) => {
      const engine = new Engine([q(5, algorithm)]);
      decision(engine.acquire({ key: 'k', cost: 3 }, T0));
      engine.setQuotas([q(2, algorithm)], T0);
      expect(decision(engine.acquire({ key: 'k', cost: 2 }, T0)).allowed).toBe(admitted);
      expect(decision(engine.acquire({ key: 'k', cost: 1 }, T0)).allowed).toBe(false);
    });

    it('moves a key from sub-buckets to logs counting each cost as long as its bucket did', () => {
      const llm = (rpm: number): QuotaSpec => ({
        name: 'llm',
        limits: [
          limit('rpm', rpm, MINUTE, 'sliding_window'),
          limit('tpm', 1000, MINUTE, 'sliding_window', 'tokens'),
        ],
      });
      const engine = new Engine([llm(100)]);
      const cost = (tokens: number) => ({ key: 'k', quota: 'llm', cost: { requests: 1, tokens } });
      // Sub-buckets of 6 s: the admission at T0 + 1 s counts until T0 + 66 s.
      decision(engine.acquire(cost(900), T0 + 1000));
      engine.setQuotas([llm(50)], T0 + 2000); // an rpm of 50: logs for rpm and tpm
      expect(used(engine, 'k', 'llm', T0 + 2000)).toEqual({ rpm: 1, tpm: 900 });
      expect(decision(engine.acquire(cost(101), T0 + 2000)).retryAfterMs).toBe(64_000);
      expect(decision(engine.acquire(cost(1000), T0 + 66_000)).allowed).toBe(true);
      // From here on, to the ms.
      expect(decision(engine.acquire(cost(1), T0 + 66_001)).retryAfterMs).toBe(59_999);
    });

    it('admits waiters when a limit is raised', () => {
      const withQueue = { queue: { maxSize: 5, maxWaitMs: 5000 } };
      const engine = new Engine([q(1, 'fixed_window', withQueue)]);
      decision(engine.acquire({ key: 'k' }, T0));
      const w = waiter(engine.acquire({ key: 'k', wait: true }, T0));
      engine.setQuotas([q(2, 'fixed_window', withQueue)], T0 + 10);
      expect(w.settled).toMatchObject({ code: 'OK', waitedMs: 10 });
    });

    it.each<AlgorithmName>(['sliding_window', 'token_bucket'])(
      'carries usage into %s',
      (algorithm) => {
        const engine = new Engine([q(5)]);
        for (let i = 0; i < 3; i++) decision(engine.acquire({ key: 'k' }, T0));
        engine.setQuotas([q(5, algorithm)], T0 + 1);
        expect(used(engine, 'k', 'q', T0 + 1)).toEqual({ rps: 3 });
        expect(decision(engine.acquire({ key: 'k', cost: 2 }, T0 + 1)).allowed).toBe(true);
        expect(decision(engine.acquire({ key: 'k' }, T0 + 1)).code).toBe('RATE_LIMITED');
      },
    );

    it('answers the waiters of a deleted quota UNKNOWN_QUOTA', () => {
      const engine = new Engine([q(1, 'fixed_window', { queue: { maxSize: 5, maxWaitMs: 5000 } })]);
      decision(engine.acquire({ key: 'k' }, T0));
      const w = waiter(engine.acquire({ key: 'k', wait: true }, T0));
      engine.setQuotas([], T0 + 20);
      expect(w.settled).toMatchObject({ allowed: false, code: 'UNKNOWN_QUOTA', waitedMs: 20 });
      expect(w.cancel(T0 + 21)).toBe(false);
      expect(decision(engine.acquire({ key: 'k', quota: 'q' }, T0 + 21)).code).toBe(
        'UNKNOWN_QUOTA',
      );
      expect(engine.footprint()).toMatchObject({ keys: 0, waiters: 0 });
      runUntil(engine, T0 + 20 * MINUTE);
      expect(engine.footprint()).toEqual(ZERO);
    });

    const bad = (patch: Partial<LimitSpec>): QuotaSpec => ({
      name: 'other',
      limits: [{ ...limit('rps', 1, 1000), ...patch }],
    });
    it.each<[string, QuotaSpec]>([
      ['name', { name: '', limits: [] }],
      ['limits', { name: 'other' } as unknown as QuotaSpec],
      ['limits[0].limit', bad({ limit: -1 })],
      ['limits[0].limit', bad({ limit: 1.5 })],
      ['limits[0].windowMs', bad({ windowMs: 0 })],
      ['limits[0].unit', bad({ unit: 'Tokens' })],
      ['limits[0].algorithm', bad({ algorithm: 'leaky' as AlgorithmName })],
      ['limits[0].burst', bad({ burst: 5 })],
      ['limits[0].precision', bad({ algorithm: 'sliding_window', precision: 0 })],
      ['limits[0].timezone', bad({ timezone: 'UTC' })],
      ['limits[0].windowMs', bad({ align: 'calendar', windowMs: 3_600_000 })],
      [
        'limits[0].timezone',
        bad({ align: 'calendar', windowMs: 86_400_000, timezone: 'Mars/Olympus' }),
      ],
      ['limits[1].name', { name: 'q', limits: [limit('rps', 1, 1000), limit('rps', 2, 1000)] }],
      ['queue.maxSize', { ...q(1), queue: { maxSize: -1, maxWaitMs: 1000 } }],
      ['queue.maxWaitMs', { ...q(1), queue: { maxSize: 1, maxWaitMs: 86_400_001 } }],
      ['concurrency.max', { ...q(1), concurrency: { max: 0, leaseTtlMs: 1000 } }],
      ['match', { ...q(1), match: 're:(' }],
    ])('refuses an invalid %s and keeps the old config in force', (field, spec) => {
      const engine = new Engine([q(3)]);
      decision(engine.acquire({ key: 'k' }, T0));
      let error: unknown;
      try {
        engine.setQuotas([spec], T0 + 1);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InvalidQuotaError);
      expect(error).toMatchObject({ field });
      expect(engine.quotas()).toEqual([q(3)]);
      expect(stats(engine, 'k', 'q', T0 + 1).limits).toMatchObject([{ limit: 3, used: 1 }]);
    });

    it('refuses a quota name defined twice and keeps the old config in force', () => {
      const engine = new Engine([q(3)]);
      let error: unknown;
      try {
        engine.setQuotas([q(100), q(5)], T0);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InvalidQuotaError);
      expect(error).toMatchObject({ field: 'name' });
      expect(engine.quotas()).toEqual([q(3)]);
    });
  });

  describe('snapshot and restore', () => {
    const quotas: QuotaSpec[] = [
      {
        name: 'llm',
        limits: [limit('rpm', 10, MINUTE), limit('tpm', 1000, MINUTE, 'sliding_window', 'tokens')],
      },
      { name: 'bucket', limits: [limit('rps', 5, 1000, 'token_bucket')] },
      { name: 'c', limits: [limit('rps', 100, 1000)], concurrency: { max: 2, leaseTtlMs: 30_000 } },
    ];
    const roundTrip = (e: Engine, now: number) =>
      JSON.parse(JSON.stringify(e.snapshot(now))) as ReturnType<Engine['snapshot']>;

    it('keeps counts and leases through a JSON round trip into a new engine', () => {
      const a = new Engine(quotas);
      decision(a.acquire({ key: 'u1', quota: 'llm', cost: { tokens: 600 } }, T0));
      decision(a.acquire({ key: 'u1', quota: 'llm', cost: { tokens: 100 } }, T0 + 100));
      decision(a.acquire({ key: 'u2', quota: 'llm', cost: 4 }, T0 + 200));
      decision(a.acquire({ key: 'u1', quota: 'bucket', cost: 4 }, T0 + 300));
      const lease = decision(a.acquire({ key: 'u1', quota: 'c' }, T0 + 400));
      decision(a.acquire({ key: 'u1', quota: 'c' }, T0 + 400));

      const now = T0 + 500;
      const b = new Engine(quotas);
      b.restore(roundTrip(a, now), now);
      for (const [key, quota] of [
        ['u1', 'llm'],
        ['u2', 'llm'],
        ['u1', 'bucket'],
        ['u1', 'c'],
      ]) {
        expect(stats(b, key!, quota, now)).toEqual(stats(a, key!, quota, now));
      }
      expect(stats(b, 'u1', 'c', now).inFlight).toBe(2);
      expect(decision(b.acquire({ key: 'u1', quota: 'c' }, now)).code).toBe('CONCURRENCY_LIMITED');
      expect(b.release({ key: 'u1', quota: 'c', leaseId: lease.leaseId }, now)).toEqual({
        ok: true,
        value: true,
      });
      expect(
        decision(b.acquire({ key: 'u1', quota: 'llm', cost: { tokens: 301 } }, now)).code,
      ).toBe('RATE_LIMITED');
      expect(
        decision(b.acquire({ key: 'u1', quota: 'llm', cost: { tokens: 300 } }, now)).code,
      ).toBe('OK');
    });

    it('marks the sliding windows that keep a log; a snapshot from before logs reads as sub-buckets', () => {
      const a = new Engine(quotas);
      decision(a.acquire({ key: 'u', quota: 'llm', cost: { tokens: 600 } }, T0 + 7000));
      const taken = roundTrip(a, T0 + 7000);
      // rpm is a fixed window; tpm is alone over its minute: sub-buckets, unmarked.
      expect(taken.quotas[0]!.limits.map((l) => l.log)).toEqual([undefined, undefined]);
      const logged: QuotaSpec = {
        name: 'llm',
        limits: [
          limit('rpm', 10, MINUTE, 'sliding_window'),
          limit('tpm', 1000, MINUTE, 'sliding_window', 'tokens'),
        ],
      };
      const b = new Engine([logged]);
      decision(b.acquire({ key: 'u', quota: 'llm', cost: { tokens: 600 } }, T0 + 7000));
      expect(roundTrip(b, T0 + 7000).quotas[0]!.limits.map((l) => l.log)).toEqual([
        { size: 10, units: true },
        { size: 10, units: false },
      ]);
      // The same limits, taken before logs: 600 tokens in the sub-bucket of T0+6..12 s, which
      // counted them until T0 + 72 s; a log now counts them exactly as long.
      const head = Math.floor((T0 + 7000) / 6000);
      const row = [
        T0,
        1,
        0,
        head,
        1,
        ...Array<number>(11).fill(0),
        head,
        600,
        ...Array(11).fill(0),
      ];
      row[5 + (head % 11)] = 1;
      row[5 + 13 + (head % 11)] = 600;
      const c = new Engine([logged]);
      c.restore(
        {
          version: 2,
          takenAt: T0 + 7000,
          quotas: [
            { name: 'llm', limits: logged.limits, stride: 29, keys: ['u'], rows: row, leases: [] },
          ],
        },
        T0 + 7000,
      );
      expect(used(c, 'u', 'llm', T0 + 7000)).toEqual({ rpm: 1, tpm: 600 });
      const refused = decision(
        c.acquire({ key: 'u', quota: 'llm', cost: { tokens: 401 } }, T0 + 8000),
      );
      expect(refused).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 72_000 - 8000 });
    });

    it('matches limits by name when the limits changed in between', () => {
      const a = new Engine(quotas);
      decision(a.acquire({ key: 'u', quota: 'llm', cost: { requests: 3, tokens: 600 } }, T0));
      const changed: QuotaSpec = {
        name: 'llm',
        limits: [
          limit('rpd', 1000, 86_400_000),
          limit('tpm', 2000, MINUTE, 'sliding_window', 'tokens'),
          limit('rpm', 4, MINUTE, 'token_bucket'),
        ],
      };
      const b = new Engine([changed]);
      b.restore(roundTrip(a, T0 + 1), T0 + 1);
      expect(used(b, 'u', 'llm', T0 + 1)).toEqual({ rpd: 0, tpm: 600, rpm: 3 });
      expect(decision(b.acquire({ key: 'u', quota: 'llm', cost: 2 }, T0 + 1)).limitName).toBe(
        'rpm',
      );
    });
  });

  describe('drain', () => {
    it('answers every waiter', () => {
      const spec = (name: string): QuotaSpec => ({
        name,
        limits: [limit('rps', 1, 1000)],
        queue: { maxSize: 5, maxWaitMs: 5000 },
      });
      const engine = new Engine([spec('a'), spec('b')]);
      const waiters: PendingAcquire[] = [];
      for (const quota of ['a', 'b']) {
        for (const key of ['k1', 'k2']) {
          decision(engine.acquire({ key, quota }, T0));
          waiters.push(waiter(engine.acquire({ key, quota, wait: true }, T0)));
          waiters.push(waiter(engine.acquire({ key, quota, wait: true }, T0)));
        }
      }
      expect(engine.footprint().waiters).toBe(8);
      engine.drain(T0 + 50);
      expect(waiters.map((w) => w.settled?.code)).toEqual(Array(8).fill('UNAVAILABLE'));
      expect(waiters.every((w) => w.settled?.waitedMs === 50)).toBe(true);
      expect(engine.footprint().waiters).toBe(0);
      expect(engine.counters().map((c) => c.queued)).toEqual([0, 0]);
    });
  });

  describe('memory', () => {
    it('returns to zero once keys go idle and their windows, receipts and ids expire', () => {
      const engine = new Engine(
        [
          { name: 'fixed', limits: [limit('r', 3, 1000)], queue: { maxSize: 5, maxWaitMs: 2000 } },
          { name: 'sliding', limits: [limit('r', 3, MINUTE, 'sliding_window')] },
          { name: 'bucket', limits: [limit('r', 3, 1000, 'token_bucket')] },
          {
            name: 'conc',
            limits: [limit('r', 50, 1000)],
            concurrency: { max: 2, leaseTtlMs: 90_000 },
          },
        ],
        { shards: 4 },
      );
      let now = T0;
      for (let i = 0; i < 200; i++) {
        const key = `key-${i % 37}`;
        const quota = ['fixed', 'sliding', 'bucket', 'conc'][i % 4]!;
        const r = engine.acquire(
          { key, quota, wait: i % 3 === 0, requestId: i % 5 === 0 ? `id-${i}` : undefined },
          now,
        );
        if (!(r instanceof PendingAcquire) && r.allowed && i % 7 === 0) {
          engine.release({ key, quota, requestId: r.requestId }, now);
        }
        if (i % 11 === 0) engine.usage({ key, quota, cost: 2 }, now);
        now += 37;
        runUntil(engine, now);
      }
      expect(engine.footprint().keys).toBeGreaterThan(0);
      expect(engine.footprint().receipts).toBeGreaterThan(0);
      runUntil(engine, now + 2 * MINUTE);
      // Keys are gone with their windows; receipts stay for release and usage until their TTL.
      expect(engine.footprint()).toMatchObject({ keys: 0, waiters: 0 });
      expect(engine.footprint().receipts).toBeGreaterThan(0);
      runUntil(engine, now + 11 * MINUTE);
      expect(engine.footprint()).toEqual(ZERO);
      expect(engine.nextWakeAt()).toBe(Infinity);
      expect(engine.counters().map((c) => c.activeKeys)).toEqual([0, 0, 0, 0]);
    });

    it('gives keys without waiters or leases no timer entry, and drops them within idleSweepMs', () => {
      const engine = new Engine([{ name: 'q', limits: [limit('r', 10, 1000)] }], {
        shards: 1,
        idleSweepMs: 300,
      });
      for (let i = 0; i < 100; i++) engine.acquire({ key: `k${i}`, quota: 'q' }, T0 + 10);
      expect(engine.footprint()).toMatchObject({ keys: 100, timers: 0 });
      expect(engine.nextWakeAt()).toBe(T0 + 310);
      runUntil(engine, T0 + 999);
      // Idle from T0 + 1000 (window end); found by the pass at T0 + 1210.
      expect(engine.footprint().keys).toBe(100);
      runUntil(engine, T0 + 1209);
      expect(engine.footprint().keys).toBe(100);
      runUntil(engine, T0 + 1210);
      expect(engine.footprint().keys).toBe(0);
      expect(engine.nextWakeAt()).toBe(Infinity);
    });

    it('staggers the passes of the shards over idleSweepMs', () => {
      const engine = new Engine([{ name: 'q', limits: [limit('r', 10, 1000)] }], {
        shards: 4,
        idleSweepMs: 400,
      });
      for (let i = 0; i < 64; i++) engine.acquire({ key: `k${i}`, quota: 'q' }, T0);
      const passes: number[] = [];
      for (let at = engine.nextWakeAt(); at <= T0 + 400; at = engine.nextWakeAt()) {
        passes.push(at - T0);
        engine.advance(at);
      }
      expect(passes).toEqual([100, 200, 300, 400]);
    });
  });
});

describe('idle sweeps of the shards', () => {
  it('stay spread over the interval after a pause, not all in one call', () => {
    // 25 shards, keys in every one, a window that keeps them for the whole test.
    const e = new Engine([{ name: 'h', limits: [limit('rph', 100, 3_600_000)] }], { shards: 25 });
    for (let i = 0; i < 2000; i++) decision(e.acquire({ key: `k${i}`, quota: 'h' }, T0));
    // The host was busy for 10 s (a long task, a GC, a stopped process): every sweep is due.
    e.advance(T0 + 10_000);
    const instants = new Set<number>();
    for (let at = e.nextWakeAt(); at <= T0 + 11_000; at = e.nextWakeAt()) {
      instants.add(at);
      e.advance(at);
    }
    // Re-armed from the same `now`, every shard would pass over its keys in the same call, every
    // interval from then on: at 1 000 000 keys, a 100-400 ms stall each second.
    expect(instants.size).toBeGreaterThanOrEqual(20);
  });
});
