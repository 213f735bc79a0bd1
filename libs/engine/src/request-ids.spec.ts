import { Engine, PendingAcquire, type Decision, type LimitSpec, type QuotaSpec } from './index';
import { CHARS_PER_ID, memoKey } from './shard/idempotency';

// A virtual clock: `now` is a plain number.
const T0 = 1_800_000_000_000;
const MINUTE = 60_000;
/** The contract's bound: requestIds a shard remembers at most (docs/contract.md). */
const BOUND = 16_384;

const requests = (max: number, windowMs = 10 * MINUTE): LimitSpec => ({
  name: 'r',
  unit: 'requests',
  limit: max,
  windowMs,
  algorithm: 'fixed_window',
});

function decision(r: Decision | PendingAcquire): Decision {
  if (r instanceof PendingAcquire) throw new Error(`expected an answer, got waiter ${r.requestId}`);
  return r;
}

function usedOf(engine: Engine, key: string, now: number): number {
  const out = engine.stats({ key }, now);
  if (!out.ok) throw new Error(`stats refused: ${out.code}`);
  return out.value.limits[0]!.used;
}

describe('requestIds a shard remembers', () => {
  const quota: QuotaSpec = { name: 'q', match: '*', limits: [requests(1_000_000)] };

  it('are at most 16 384 per shard, answers and receipts alike: the oldest go first', () => {
    const engine = new Engine([quota], { shards: 1 });
    const n = BOUND + 1000;
    const first: Decision[] = [];
    for (let i = 0; i < n; i++) {
      first.push(decision(engine.acquire({ key: 'k', requestId: `r${i}` }, T0 + i)));
    }
    const now = T0 + n;
    expect(engine.footprint().remembered).toBe(BOUND);
    // The oldest ids are forgotten with everything kept for them: release finds no receipt.
    expect(engine.release({ key: 'k', requestId: 'r0' }, now)).toEqual({ ok: true, value: false });
    expect(engine.release({ key: 'k', requestId: `r${n - BOUND - 1}` }, now)).toEqual({
      ok: true,
      value: false,
    });
    // The newest are answered with their first answer, charged once.
    const mismatched: number[] = [];
    for (let i = n - BOUND; i < n; i++) {
      const again = engine.acquire({ key: 'k', requestId: `r${i}` }, now);
      if (JSON.stringify(again) !== JSON.stringify(first[i])) mismatched.push(i);
    }
    expect(mismatched).toEqual([]);
    expect(usedOf(engine, 'k', now)).toBe(n);
    expect(engine.release({ key: 'k', requestId: `r${n - BOUND}` }, now)).toEqual({
      ok: true,
      value: true,
    });
    expect(engine.footprint().remembered).toBe(BOUND);
  });

  it('are fewer when keys and ids are long: their characters are bounded too', () => {
    const engine = new Engine([quota], { shards: 1 });
    const key = 'k'.repeat(200);
    const id = (i: number): string => `${i}`.padStart(128, '-');
    const n = 6000;
    const first: Decision[] = [];
    for (let i = 0; i < n; i++) first.push(decision(engine.acquire({ key, requestId: id(i) }, T0)));
    const remembered = engine.footprint().remembered;
    const chars = memoKey(0, key, id(0)).length;
    expect(remembered).toBe(Math.floor((BOUND * CHARS_PER_ID) / chars));
    expect(remembered).toBeLessThan(n);
    // The newest are still answered with their first answer; the one before them is forgotten.
    const newest = n - remembered;
    expect(engine.acquire({ key, requestId: id(n - 1) }, T0 + 1)).toEqual(first[n - 1]);
    expect(engine.acquire({ key, requestId: id(newest) }, T0 + 1)).toEqual(first[newest]);
    expect(engine.release({ key, requestId: id(newest - 1) }, T0 + 1)).toEqual({
      ok: true,
      value: false,
    });
  });

  it('keep the bound per shard with many keys, and forget everything once receipts expire', () => {
    const engine = new Engine([quota], { shards: 2, idempotencyCapacity: 50 });
    for (let i = 0; i < 1000; i++) engine.acquire({ key: `k${i % 7}`, requestId: `r${i}` }, T0);
    expect(engine.footprint().remembered).toBe(2 * 50);
    engine.advance(T0 + 10 * MINUTE);
    expect(engine.footprint()).toMatchObject({ remembered: 0, receipts: 0 });
  });

  it('give a repeat the first answer whole: refusal, reason, limit name, lease and shadow', () => {
    const engine = new Engine([
      {
        name: 'c',
        match: 'c*',
        limits: [requests(2, MINUTE)],
        concurrency: { max: 1, leaseTtlMs: MINUTE },
      },
      { name: 's', match: 's*', limits: [requests(1, MINUTE)], shadow: true },
    ]);
    const asked = [
      { key: 'c1', requestId: 'leased' },
      { key: 'c1', requestId: 'capped' },
      { key: 'c2', requestId: 'too-big', cost: 3 },
      { key: 's1', requestId: 'first' },
      { key: 's1', requestId: 'would-refuse' },
      { key: 'c3', requestId: 'late', deadline: T0 },
    ];
    const first = asked.map((input) => decision(engine.acquire(input, T0)));
    expect(first.map((d) => d.code)).toEqual([
      'OK',
      'CONCURRENCY_LIMITED',
      'COST_EXCEEDS_LIMIT',
      'OK',
      'OK',
      'WAIT_TIMEOUT',
    ]);
    expect(first[0]!.leaseId).toEqual(expect.any(String));
    expect(first[4]).toMatchObject({ shadow: true, reason: expect.stringContaining('shadow') });
    const again = asked.map((input) => decision(engine.acquire(input, T0 + 1000)));
    expect(again).toEqual(first);
  });

  it('keep the answer of a waiter that was answered, not the waiter', () => {
    const engine = new Engine([
      {
        name: 'w',
        match: '*',
        limits: [requests(1, 1000)],
        queue: { maxSize: 5, maxWaitMs: MINUTE },
      },
    ]);
    decision(engine.acquire({ key: 'k' }, T0));
    const waiting = engine.acquire({ key: 'k', requestId: 'w', wait: true }, T0 + 10);
    if (!(waiting instanceof PendingAcquire)) throw new Error('expected a waiter');
    engine.advance(T0 + 1000);
    expect(waiting.settled).toMatchObject({ allowed: true, waitedMs: 990, requestId: 'w' });
    const again = decision(engine.acquire({ key: 'k', requestId: 'w', wait: true }, T0 + 1001));
    expect(again).toEqual(waiting.settled);
    expect(engine.release({ key: 'k', requestId: 'w' }, T0 + 1002)).toEqual({
      ok: true,
      value: true,
    });
  });
});
