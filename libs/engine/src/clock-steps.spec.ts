import {
  Engine,
  PendingAcquire,
  type AlgorithmName,
  type Decision,
  type LimitSpec,
  type QuotaSpec,
} from './index';

// A host clock that went an hour ahead and came back (issue 25 point 7), on a virtual clock: the
// engine sees `now` jump back by an hour between two calls. Whatever was dated from the later
// clock locks, holds or waits no longer than it would had it been dated at the step.
const T0 = 1_800_000_000_000; // a multiple of a minute and of a day
const HOUR = 3_600_000;
const AHEAD = T0 + HOUR;

function limit(max: number, windowMs: number, algorithm: AlgorithmName): LimitSpec {
  return { name: 'rps', unit: 'requests', limit: max, windowMs, algorithm };
}

function decision(r: Decision | PendingAcquire): Decision {
  if (r instanceof PendingAcquire) throw new Error(`expected an answer, got waiter ${r.requestId}`);
  return r;
}

/** What a host does: advance at every wake-up up to `t`, then to `t`. */
function runUntil(engine: Engine, t: number): void {
  for (let at = engine.nextWakeAt(); at <= t; at = engine.nextWakeAt()) engine.advance(at);
  engine.advance(t);
}

/** The clock was an hour ahead while `used` ran, then the host's next tick reads T0. */
function stepBack(engine: Engine, used: () => void): void {
  runUntil(engine, AHEAD);
  used();
  runUntil(engine, AHEAD + 10);
  engine.advance(T0);
}

describe('a clock that steps back', () => {
  it.each<[string, LimitSpec, number]>([
    ['fixed_window', limit(3, 1000, 'fixed_window'), 1000],
    [
      'fixed_window, calendar days',
      { ...limit(3, 86_400_000, 'fixed_window'), align: 'calendar' },
      86_400_000,
    ],
    ['sliding_window, a log', limit(3, 1000, 'sliding_window'), 1000],
    ['sliding_window, sub-buckets', limit(300, 1000, 'sliding_window'), 1100],
    ['token_bucket', limit(3, 1000, 'token_bucket'), 334],
  ])(
    '%s: locks the key no longer than its window (or refill), and retryAfterMs holds',
    (_name, spec, longest) => {
      const engine = new Engine([{ name: 'q', limits: [spec] }], { shards: 1 });
      const cost = spec.limit;
      stepBack(engine, () => {
        expect(decision(engine.acquire({ key: 'k', quota: 'q', cost }, AHEAD)).allowed).toBe(true);
      });
      const refused = decision(engine.acquire({ key: 'k', quota: 'q' }, T0));
      expect(refused.code).toBe('RATE_LIMITED');
      expect(refused.retryAfterMs).toBeLessThanOrEqual(longest);
      const at = T0 + refused.retryAfterMs;
      expect(decision(engine.decide({ key: 'k', quota: 'q' }, at - 1)).allowed).toBe(false);
      expect(decision(engine.acquire({ key: 'k', quota: 'q' }, at)).allowed).toBe(true);
    },
  );

  const queued: QuotaSpec = {
    name: 'q',
    limits: [limit(1, 1000, 'fixed_window')],
    queue: { maxSize: 5, maxWaitMs: 5000 },
  };

  it('admits a waiter queued before the step when capacity comes back, not an hour later', () => {
    const engine = new Engine([queued], { shards: 1 });
    let w: PendingAcquire | undefined;
    stepBack(engine, () => {
      decision(engine.acquire({ key: 'k', quota: 'q' }, AHEAD));
      w = engine.acquire({ key: 'k', quota: 'q', wait: true }, AHEAD) as PendingAcquire;
    });
    expect(engine.nextWakeAt()).toBeLessThanOrEqual(T0 + 1000);
    runUntil(engine, T0 + 999);
    expect(w!.settled).toBeUndefined();
    runUntil(engine, T0 + 1000);
    expect(w!.settled).toMatchObject({ allowed: true, code: 'OK' });
    expect(w!.settled!.waitedMs).toBeGreaterThanOrEqual(0);
  });

  it('times a waiter out within its maxWaitMs of the step', () => {
    const engine = new Engine([{ ...queued, limits: [limit(1, 60_000, 'fixed_window')] }], {
      shards: 1,
    });
    let w: PendingAcquire | undefined;
    stepBack(engine, () => {
      decision(engine.acquire({ key: 'k', quota: 'q' }, AHEAD));
      w = engine.acquire({ key: 'k', quota: 'q', wait: true }, AHEAD) as PendingAcquire;
    });
    runUntil(engine, T0 + 4999);
    expect(w!.settled).toBeUndefined();
    runUntil(engine, T0 + 5000);
    expect(w!.settled).toMatchObject({ code: 'WAIT_TIMEOUT', waitedMs: 5000 });
  });

  it('frees a concurrency lease its leaseTtlMs after the step at the latest', () => {
    const conc: QuotaSpec = {
      name: 'c',
      limits: [limit(100, 1000, 'fixed_window')],
      concurrency: { max: 1, leaseTtlMs: 2000 },
    };
    const engine = new Engine([conc], { shards: 1 });
    stepBack(engine, () => decision(engine.acquire({ key: 'k', quota: 'c' }, AHEAD)));
    const refused = decision(engine.acquire({ key: 'k', quota: 'c' }, T0 + 1999));
    expect(refused).toMatchObject({ code: 'CONCURRENCY_LIMITED', retryAfterMs: 1 });
    expect(decision(engine.acquire({ key: 'k', quota: 'c' }, T0 + 2000)).code).toBe('OK');
  });

  it('never frees more on the release of a request charged before the step than it counted', () => {
    const engine = new Engine([{ name: 'q', limits: [limit(2, 1000, 'sliding_window')] }], {
      shards: 1,
      idleSweepMs: 100,
    });
    let early: Decision | undefined;
    stepBack(engine, () => {
      early = decision(engine.acquire({ key: 'k', quota: 'q' }, AHEAD));
    });
    runUntil(engine, T0 + 100); // the idle pass dates the early request at T0 + 100
    expect(decision(engine.acquire({ key: 'k', quota: 'q' }, T0 + 500)).allowed).toBe(true);
    engine.release({ key: 'k', quota: 'q', requestId: early!.requestId }, T0 + 600);
    // Charged no later than the step: the release can only take back what counts from T0 or
    // before, never the request of T0 + 500, which counts until T0 + 1500.
    expect(decision(engine.acquire({ key: 'k', quota: 'q', cost: 2 }, T0 + 1100))).toMatchObject({
      allowed: false,
      retryAfterMs: 400,
    });
  });

  it('remembers an answer for its idempotency window from the step, not an hour more', () => {
    const engine = new Engine([{ name: 'q', limits: [limit(5, 1000, 'fixed_window')] }]);
    let first: Decision | undefined;
    stepBack(engine, () => {
      decision(engine.acquire({ key: 'k', quota: 'q', cost: 2 }, AHEAD));
      first = decision(engine.acquire({ key: 'k', quota: 'q', requestId: 'x' }, AHEAD));
    });
    expect(first!.remaining).toBe(2);
    const repeat = decision(engine.acquire({ key: 'k', quota: 'q', requestId: 'x' }, T0 + 59_999));
    expect(repeat).toEqual(first);
    runUntil(engine, T0 + 60_000);
    const again = decision(engine.acquire({ key: 'k', quota: 'q', requestId: 'x' }, T0 + 60_000));
    expect(again.remaining).toBe(4); // decided anew, in a window of its own
  });

  it('drops keys used before the step once their window from the step has passed', () => {
    const engine = new Engine([{ name: 'q', limits: [limit(5, 1000, 'sliding_window')] }], {
      shards: 2,
      idleSweepMs: 500,
    });
    stepBack(engine, () => {
      for (let i = 0; i < 50; i++) decision(engine.acquire({ key: `k${i}`, quota: 'q' }, AHEAD));
    });
    expect(engine.footprint().keys).toBe(50);
    runUntil(engine, T0 + 1000 + 500);
    expect(engine.footprint()).toMatchObject({ keys: 0, timers: 0, waiters: 0 });
  });

  it('persists the rows it brought back to the clock, so a restart does not lock them again', () => {
    const engine = new Engine([{ name: 'q', limits: [limit(5, 60_000, 'fixed_window')] }], {
      shards: 1,
      idleSweepMs: 500,
    });
    stepBack(engine, () => decision(engine.acquire({ key: 'k', quota: 'q' }, AHEAD)));
    engine.collectChanged(() => true, 100, AHEAD); // saved before the step
    runUntil(engine, T0 + 500);
    const { rows } = engine.collectChanged(() => true, 100, T0 + 500);
    // Brought back by the idle pass at T0 + 500: it counts a window from then.
    expect(rows.keys).toEqual(['k']);
    expect(rows.idleAt[0]).toBe(T0 + 500 + 60_000);
  });
});
