import {
  Engine,
  PendingAcquire,
  type AlgorithmName,
  type Decision,
  type DecisionCode,
  type QuotaSpec,
} from './index';

// GoCC's client overrides (maxRequests / maxRequestsInQueue) change the key's own limiter in
// place: its count is kept, so after an override to N the window admits until its count reaches N,
// and no window ever admits the old limit plus the new one. Every test runs on a virtual clock.
const T0 = 1_800_000_000_000; // a multiple of 1 s: windows of 1 s start here
const WINDOW_MS = 1_000;
const SWEEP_MS = 100;

function gocc(limit: number, algorithm: AlgorithmName = 'fixed_window'): QuotaSpec {
  return {
    name: 'default',
    limits: [{ name: 'rps', unit: 'requests', limit, windowMs: WINDOW_MS, algorithm }],
    queue: { maxSize: 2, maxWaitMs: 10_000 },
    clientOverrides: true,
  };
}

function engineOf(...quotas: QuotaSpec[]): Engine {
  return new Engine(quotas, { idPrefix: 't', idleSweepMs: SWEEP_MS });
}

/** What a host does: advance at every wake-up up to `t`, then to `t`. */
function runUntil(engine: Engine, t: number): void {
  for (let at = engine.nextWakeAt(); at <= t; at = engine.nextWakeAt()) engine.advance(at);
  engine.advance(t);
}

/** At `at` (ms after T0): take one request, or set the key's own numbers. */
type Action = 'take' | { readonly limit?: number; readonly queueSize?: number };
/** The code a take answers, or `set` for numbers accepted. */
type Step = readonly [at: number, action: Action, expected: DecisionCode | 'set'];

function play(engine: Engine, key: string, steps: readonly Step[]): (DecisionCode | 'set')[] {
  return steps.map(([at, action]) => {
    runUntil(engine, T0 + at);
    if (action === 'take') {
      const answer = engine.acquire({ key, cost: { requests: 1 } }, T0 + at);
      if (answer instanceof PendingAcquire) throw new Error(`a take at ${at} waits`);
      return answer.code;
    }
    const set = engine.setKeyLimits({ key, ...action }, T0 + at);
    if (!set.ok) throw new Error(`numbers refused at ${at}: ${set.reason}`);
    return 'set';
  });
}

const takes = (at: number, n: number, code: DecisionCode = 'OK'): Step[] =>
  Array.from({ length: n }, (_, i) => [at + i, 'take', code] as const);

describe('a key’s own limit (GoCC client overrides)', () => {
  const cases: { name: string; steps: Step[] }[] = [
    {
      name: 'spend 3 of 5, lower to 4: one more, then refused; back to 5: one more',
      steps: [
        ...takes(0, 3),
        [10, { limit: 4 }, 'set'],
        [20, 'take', 'OK'],
        [30, 'take', 'RATE_LIMITED'],
        [40, { limit: 5 }, 'set'],
        [50, 'take', 'OK'],
        [60, 'take', 'RATE_LIMITED'],
      ],
    },
    {
      name: 'lowered under the count: nothing more this window; the next admits the new limit',
      steps: [
        ...takes(0, 5),
        [100, { limit: 2 }, 'set'],
        [110, 'take', 'RATE_LIMITED'],
        ...takes(1000, 2),
        [1010, 'take', 'RATE_LIMITED'],
      ],
    },
    {
      name: 'raised: the count so far stays, the window admits up to the new limit',
      steps: [
        ...takes(0, 5),
        [5, 'take', 'RATE_LIMITED'],
        [10, { limit: 7 }, 'set'],
        ...takes(20, 2),
        [30, 'take', 'RATE_LIMITED'],
      ],
    },
    {
      name: 'requests without numbers keep the key’s own, as GoCC’s limiter keeps them',
      steps: [
        [0, { limit: 1 }, 'set'],
        [1, 'take', 'OK'],
        [2, 'take', 'RATE_LIMITED'],
        [1000, 'take', 'OK'],
        [1001, 'take', 'RATE_LIMITED'],
      ],
    },
    {
      name: 'kept for 3 windows after the key’s last request, then the quota’s limit again',
      steps: [
        [0, { limit: 1 }, 'set'],
        [1, 'take', 'OK'],
        [2_500, 'take', 'OK'], // a request 2.5 windows later keeps them 3 windows after it
        [2_501, 'take', 'RATE_LIMITED'],
        [5_400, 'take', 'OK'],
        [5_401, 'take', 'RATE_LIMITED'],
        ...takes(8_400 + SWEEP_MS, 5),
        [8_600, 'take', 'RATE_LIMITED'],
      ],
    },
  ];

  it.each(cases)('$name', ({ steps }) => {
    const engine = engineOf(gocc(5));
    expect(play(engine, 'k', steps)).toEqual(steps.map(([, , expected]) => expected));
  });

  it.each<AlgorithmName>(['fixed_window', 'sliding_window', 'token_bucket'])(
    '%s decides with the key’s limit, its count kept',
    (algorithm) => {
      const engine = engineOf(gocc(5, algorithm));
      const steps: Step[] = [
        ...takes(0, 2),
        [10, { limit: 3 }, 'set'],
        [20, 'take', 'OK'],
        [30, 'take', 'RATE_LIMITED'],
      ];
      expect(play(engine, 'k', steps)).toEqual(steps.map(([, , expected]) => expected));
      expect(engine.stats({ key: 'k' }, T0 + 30)).toMatchObject({
        ok: true,
        value: { limits: [{ limit: 3, used: 3, remaining: 0 }] },
      });
    },
  );

  it('lowers a sliding window in sub-buckets (a limit above 64) below 64, keeping sub-buckets', () => {
    const engine = engineOf(gocc(100, 'sliding_window'));
    const steps: Step[] = [
      ...takes(0, 2),
      [10, { limit: 3 }, 'set'],
      [20, 'take', 'OK'],
      [30, 'take', 'RATE_LIMITED'],
      [40, { limit: 100 }, 'set'],
      ...takes(50, 97),
    ];
    expect(play(engine, 'k', steps)).toEqual(steps.map(([, , expected]) => expected));
    expect(engine.acquire({ key: 'k' }, T0 + 200)).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('changes one key only', () => {
    const engine = engineOf(gocc(5));
    play(engine, 'a', [[0, { limit: 1 }, 'set'], ...takes(1, 1)]);

    expect(play(engine, 'b', [...takes(2, 5), [10, 'take', 'RATE_LIMITED']])).toEqual([
      ...Array.from({ length: 5 }, () => 'OK'),
      'RATE_LIMITED',
    ]);
    expect(engine.limitsOf({ key: 'b' })).toMatchObject({ ok: true, value: { own: false } });
  });

  it('sizes the key’s queue: 0 refuses a waiting request at once, 1 queues one', () => {
    const engine = engineOf(gocc(1));
    const wait = (at: number): Decision | PendingAcquire =>
      engine.acquire({ key: 'k', cost: { requests: 1 }, wait: true }, T0 + at);
    play(engine, 'k', [[0, { queueSize: 0 }, 'set'], ...takes(1, 1)]);

    expect(wait(2)).toMatchObject({ code: 'RATE_LIMITED' });
    play(engine, 'k', [[3, { queueSize: 1 }, 'set']]);
    const queued = wait(4);
    expect(queued).toBeInstanceOf(PendingAcquire);
    expect(wait(5)).toMatchObject({ code: 'QUEUE_FULL' });
    runUntil(engine, T0 + WINDOW_MS);
    expect((queued as PendingAcquire).settled).toMatchObject({ code: 'OK' });
  });

  it('admits a waiter at once when the limit is raised under it', () => {
    const engine = engineOf(gocc(1));
    play(engine, 'k', takes(0, 1));
    const queued = engine.acquire({ key: 'k', cost: { requests: 1 }, wait: true }, T0 + 1);
    expect(queued).toBeInstanceOf(PendingAcquire);

    play(engine, 'k', [[2, { limit: 2 }, 'set']]);

    expect((queued as PendingAcquire).settled).toMatchObject({ code: 'OK', waitedMs: 1 });
  });

  it('bounds every wait by the quota’s own maxWaitMs, whatever the key’s numbers', () => {
    const engine = engineOf(gocc(5));
    // 1 a window and 10 000 places: draining them would take 10 000 windows, the quota allows 10.
    play(engine, 'k', [[0, { limit: 1, queueSize: 10_000 }, 'set'], ...takes(1, 1)]);
    const waiters = Array.from({ length: 50 }, (_, i) =>
      engine.acquire({ key: 'k', cost: { requests: 1 }, wait: true }, T0 + 2 + i),
    );
    expect(waiters.every((w) => w instanceof PendingAcquire)).toBe(true);
    expect(engine.limitsOf({ key: 'k' })).toMatchObject({
      ok: true,
      value: { own: true, spec: { queue: { maxSize: 10_000, maxWaitMs: 10_000 } } },
    });

    runUntil(engine, T0 + 2 + 10_000 - 1);
    const answered = waiters.filter((w) => (w as PendingAcquire).settled !== undefined);
    runUntil(engine, T0 + 2 + 50 + 10_000);

    // One a window for 10 windows; every other waiter is answered at its own deadline.
    expect(answered.length).toBeLessThan(waiters.length);
    const decisions = waiters.map((w) => (w as PendingAcquire).settled);
    expect(decisions.filter((d) => d?.code === 'OK')).toHaveLength(10);
    expect(decisions.filter((d) => d?.code === 'WAIT_TIMEOUT')).toHaveLength(40);
    // Each timed out at its deadline: the quota's 10 s after it was queued, not a ms later.
    const timedOut = decisions.filter((d) => d?.code === 'WAIT_TIMEOUT');
    expect(timedOut.every((d) => d?.waitedMs === 10_000)).toBe(true);
    expect(engine.footprint().waiters).toBe(0);
  });

  it('bounds a key’s queue: 10 000 places, or its quota’s size when that is larger', () => {
    const engine = engineOf(gocc(5), {
      ...gocc(5),
      name: 'big',
      match: 'big-*',
      queue: { maxSize: 20_000, maxWaitMs: 1_000 },
    });

    const above = engine.setKeyLimits({ key: 'k', queueSize: 10_001 }, T0);
    const big = engine.setKeyLimits({ key: 'big-1', queueSize: 20_000 }, T0);

    expect(above).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
    expect(above.ok ? '' : above.reason).toMatch(/^queueSize: .*must be an integer 0\.\.10000/);
    expect(engine.limitsOf({ key: 'k' })).toMatchObject({ ok: true, value: { own: false } });
    expect(engine.setKeyLimits({ key: 'k', queueSize: 10_000 }, T0)).toMatchObject({ ok: true });
    expect(big).toMatchObject({ ok: true, value: { spec: { queue: { maxSize: 20_000 } } } });
    expect(engine.setKeyLimits({ key: 'big-1', queueSize: 20_001 }, T0)).toMatchObject({
      ok: false,
    });
  });

  it('refuses a queue for a key whose quota gives no wait', () => {
    const engine = engineOf({ ...gocc(5), queue: undefined });

    const set = engine.setKeyLimits({ key: 'k', queueSize: 3 }, T0);

    expect(set).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
    expect(set.ok ? '' : set.reason).toMatch(/^queueSize: .*maxWaitMs.* is 0/);
    expect(engine.setKeyLimits({ key: 'k', queueSize: 0 }, T0)).toMatchObject({ ok: true });
  });

  it.each<[string, Partial<QuotaSpec>]>([
    ['clientOverrides absent', { clientOverrides: undefined }],
    ['clientOverrides false', { clientOverrides: false }],
  ])('refuses a key’s own numbers on a quota with %s, changing nothing', (_, fields) => {
    const engine = engineOf({ ...gocc(2), ...fields, name: 'api', match: 'api-*' }, gocc(2));

    const limit = engine.setKeyLimits({ key: 'api-1', limit: 1_000_000 }, T0);
    const queue = engine.setKeyLimits({ key: 'api-1', queueSize: 1_000 }, T0);

    for (const set of [limit, queue]) {
      expect(set).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
      expect(set.ok ? '' : set.reason).toBe(
        'clientOverrides: quota "api" does not let clients set a key\'s limits (its clientOverrides is not true)',
      );
    }
    expect(engine.limitsOf({ key: 'api-1' })).toMatchObject({ ok: true, value: { own: false } });
    expect(engine.footprint().keys).toBe(0);
    expect(play(engine, 'api-1', [...takes(1, 2), [3, 'take', 'RATE_LIMITED']])).toEqual([
      'OK',
      'OK',
      'RATE_LIMITED',
    ]);
    // The default quota opts in: its keys take their own numbers.
    expect(engine.setKeyLimits({ key: 'other', limit: 3 }, T0)).toMatchObject({ ok: true });
  });

  it('drops a key’s own numbers when its quota stops taking them', () => {
    const engine = engineOf(gocc(5));
    play(engine, 'k', [[0, { limit: 1 }, 'set'], ...takes(1, 1)]);

    engine.setQuotas([{ ...gocc(5), clientOverrides: false }], T0 + 10);

    expect(engine.limitsOf({ key: 'k' })).toMatchObject({ ok: true, value: { own: false } });
    expect(play(engine, 'k', [...takes(11, 4), [20, 'take', 'RATE_LIMITED']])).toEqual([
      'OK',
      'OK',
      'OK',
      'OK',
      'RATE_LIMITED',
    ]);
    expect(engine.setKeyLimits({ key: 'k', limit: 9 }, T0 + 30)).toMatchObject({ ok: false });
  });

  it('gives a released request back to the key’s own limit', () => {
    const engine = engineOf(gocc(5));
    play(engine, 'k', [[0, { limit: 1 }, 'set']]);
    const first = engine.acquire({ key: 'k', cost: { requests: 1 } }, T0 + 1) as Decision;
    expect(play(engine, 'k', [[2, 'take', 'RATE_LIMITED']])).toEqual(['RATE_LIMITED']);

    expect(engine.release({ key: 'k', requestId: first.requestId }, T0 + 3)).toEqual({
      ok: true,
      value: true,
    });
    expect(play(engine, 'k', [[4, 'take', 'OK']])).toEqual(['OK']);
  });

  it('gives way to a change of the quota’s spec, which wins as GoCC’s reload does', () => {
    const engine = engineOf(gocc(5), { name: 'other', limits: [] });
    play(engine, 'k', [[0, { limit: 2 }, 'set'], ...takes(1, 2)]);

    // Unchanged spec (another quota changed): the key keeps its own limit.
    engine.setQuotas([gocc(5), { name: 'other', match: 'o-*', limits: [] }], T0 + 10);
    expect(play(engine, 'k', [[11, 'take', 'RATE_LIMITED']])).toEqual(['RATE_LIMITED']);

    // Its own quota changed: the config's number again, the count kept (2 used of 7).
    engine.setQuotas([gocc(7)], T0 + 20);
    expect(engine.limitsOf({ key: 'k' })).toMatchObject({ ok: true, value: { own: false } });
    expect(play(engine, 'k', [...takes(21, 5), [30, 'take', 'RATE_LIMITED']])).toEqual([
      'OK',
      'OK',
      'OK',
      'OK',
      'OK',
      'RATE_LIMITED',
    ]);
  });

  it.each([
    [{ limit: 0 }, 'limit: '],
    [{ limit: -1 }, 'limit: '],
    [{ limit: 1.5 }, 'limit: '],
    [{ queueSize: -1 }, 'queueSize: '],
  ])('refuses %j naming the field, changing nothing', (numbers, field) => {
    const engine = engineOf(gocc(5));

    const set = engine.setKeyLimits({ key: 'k', ...numbers }, T0);

    expect(set).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
    expect(set.ok ? '' : set.reason).toMatch(new RegExp(`^${field}`));
    expect(engine.limitsOf({ key: 'k' })).toMatchObject({ ok: true, value: { own: false } });
    expect(engine.footprint().keys).toBe(0);
  });

  it('refuses a limit for a quota that enforces none', () => {
    const engine = engineOf({ ...gocc(0), name: 'default' });

    const set = engine.setKeyLimits({ key: 'k', limit: 3 }, T0);

    expect(set).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
    expect(set.ok ? '' : set.reason).toMatch(/^limit: .*has no enforced limit to change/);
  });

  it('lowers a sliding window kept as a log, exact to the ms; refuses a limit above the log’s size', () => {
    // A limit of 5 requests is kept as a log of 5 (exact to the ms); the key's own 3, then 8.
    const engine = engineOf(gocc(5, 'sliding_window'));
    const steps: Step[] = [
      [0, 'take', 'OK'],
      [1, { limit: 3 }, 'set'],
      ...takes(2, 2),
      [4, 'take', 'RATE_LIMITED'],
      [500, { limit: 5 }, 'set'],
      ...takes(501, 2),
      [503, 'take', 'RATE_LIMITED'],
      // Exact: the take at 0 leaves the window at 1000, not a sub-bucket later.
      [999, 'take', 'RATE_LIMITED'],
      [1_000, 'take', 'OK'],
      [1_001, 'take', 'RATE_LIMITED'],
    ];
    expect(play(engine, 'k', steps)).toEqual(steps.map(([, , expected]) => expected));
    // A log of 5 cannot count 8: refused, the key's numbers and counts unchanged.
    const above = engine.setKeyLimits({ key: 'k', limit: 8 }, T0 + 1_001);
    expect(above).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
    expect(above.ok ? '' : above.reason).toMatch(/^limit: .*must be at most 5/);
    expect(engine.stats({ key: 'k' }, T0 + 1_001)).toMatchObject({
      ok: true,
      value: { limits: [{ limit: 5, used: 5, remaining: 0 }] },
    });
  });

  it('keeps each key’s own limits with its row when the table compacts around them', () => {
    const engine = engineOf(gocc(5));
    const owners = Array.from({ length: 20 }, (_, i) => `own-${i}`);
    for (let i = 0; i < 2_000; i++)
      engine.acquire({ key: `plain-${i}`, cost: { requests: 1 } }, T0);
    for (const key of owners) play(engine, key, [[0, { limit: 1 }, 'set']]);

    // The plain keys go idle and are dropped; the rows left are moved down.
    runUntil(engine, T0 + WINDOW_MS + SWEEP_MS);
    expect(engine.footprint().keys).toBe(owners.length);

    for (const key of owners) {
      expect(play(engine, key, [...takes(1_500, 1), [1_501, 'take', 'RATE_LIMITED']])).toEqual([
        'OK',
        'RATE_LIMITED',
      ]);
    }
  });

  it('returns memory to its baseline once the keys’ own limits lapsed', () => {
    const engine = engineOf(gocc(5));
    for (let i = 0; i < 1_000; i++) {
      engine.setKeyLimits({ key: `k${i}`, limit: 1 + (i % 97), queueSize: i % 13 }, T0);
      engine.acquire({ key: `k${i}`, cost: { requests: 1 } }, T0);
    }
    expect(engine.footprint().keys).toBe(1_000);

    runUntil(engine, T0 + 3 * WINDOW_MS - 1);
    expect(engine.footprint().keys).toBe(1_000);
    runUntil(engine, T0 + 3 * WINDOW_MS + SWEEP_MS);

    expect(engine.footprint()).toEqual({
      keys: 0,
      timers: 0,
      receipts: 1_000,
      remembered: 0,
      waiters: 0,
    });
  });
});
