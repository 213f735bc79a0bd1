import {
  Engine,
  PendingAcquire,
  type ChangeCursor,
  type ChangedRows,
  type Decision,
  type LimitSpec,
  type QuotaSpec,
} from './index';

// A virtual clock: `now` is a plain number. T0 is a multiple of one minute.
const T0 = 1_800_000_000_000;
const MINUTE = 60_000;
const all = (): boolean => true;

const limit = (max: number, windowMs: number, algorithm: LimitSpec['algorithm']): LimitSpec => ({
  name: 'rpm',
  unit: 'requests',
  limit: max,
  windowMs,
  algorithm,
});
const perMinute: QuotaSpec = { name: 'pm', limits: [limit(100, MINUTE, 'fixed_window')] };
const sliding: QuotaSpec = { name: 'sl', limits: [limit(100, MINUTE, 'sliding_window')] };

function decision(r: Decision | PendingAcquire): Decision {
  if (r instanceof PendingAcquire) throw new Error(`expected an answer, got ${r.requestId}`);
  return r;
}

/** Every changed row, by whole passes of `maxRows` slices; the slices are returned too. */
function collectAll(
  engine: Engine,
  now: number,
  maxRows = 1000,
  include: (quota: string) => boolean = all,
): { keys: string[]; slices: ChangedRows[] } {
  const slices: ChangedRows[] = [];
  let cursor: ChangeCursor | undefined;
  do {
    const { rows, next } = engine.collectChanged(include, maxRows, now, cursor);
    slices.push(rows);
    cursor = next;
  } while (cursor !== undefined);
  return { keys: slices.flatMap((s) => s.keys).sort(), slices };
}

const goneOf = (slices: readonly ChangedRows[]): string[] =>
  slices.flatMap((s) => s.gone.flatMap((g) => g.keys.map((k) => `${g.quota}/${k}`))).sort();

const acquire = (e: Engine, key: string, now: number, quota = 'pm', cost = 1): Decision =>
  decision(e.acquire({ key, quota, cost }, now));

describe('collectChanged (per-key persistence)', () => {
  it('yields only the rows written since they were last collected', () => {
    const e = new Engine([perMinute]);
    for (let i = 0; i < 100; i++) acquire(e, `k${i}`, T0);
    expect(collectAll(e, T0).keys).toHaveLength(100);
    expect(collectAll(e, T0).keys).toEqual([]);

    acquire(e, 'k7', T0 + 1);
    acquire(e, 'k42', T0 + 2);
    acquire(e, 'k42', T0 + 3);
    // Reads write nothing that a restart would need.
    e.decide({ key: 'k1', quota: 'pm' }, T0 + 4);
    e.stats({ key: 'k2', quota: 'pm' }, T0 + 4);
    const { keys, slices } = collectAll(e, T0 + 5);
    expect(keys).toEqual(['k42', 'k7']);
    const rows = slices[0]!;
    const stride = rows.quotas[0]!.stride;
    const k42 = rows.keys.indexOf('k42');
    // The row as the engine holds it: [statsWindow, approved, denied, start, end, used].
    expect(Array.from(rows.state.subarray(k42 * stride, (k42 + 1) * stride))).toEqual([
      T0,
      3,
      0,
      T0,
      T0 + MINUTE,
      3,
    ]);
    expect(rows.idleAt[k42]).toBe(T0 + MINUTE);
    expect(rows.quotas).toEqual([
      { name: 'pm', limits: perMinute.limits, stride: perMinute.limits.length * 3 + 3 },
    ]);
  });

  it('returns at most maxRows a call, and every changed row exactly once over a pass', () => {
    const e = new Engine([perMinute, sliding], { shards: 7 });
    for (let i = 0; i < 5000; i++) acquire(e, `k${i}`, T0, i % 2 === 0 ? 'pm' : 'sl');
    const { keys, slices } = collectAll(e, T0, 128);
    expect(Math.max(...slices.map((s) => s.keys.length))).toBeLessThanOrEqual(128);
    expect(slices.length).toBeGreaterThanOrEqual(Math.ceil(5000 / 128));
    expect(keys).toHaveLength(5000);
    expect(new Set(keys).size).toBe(5000);
  });

  it('takes only the quotas the host persists', () => {
    const e = new Engine([perMinute, sliding]);
    acquire(e, 'a', T0, 'pm');
    acquire(e, 'b', T0, 'sl');
    const { slices } = collectAll(e, T0, 10, (q) => q === 'sl');
    expect(slices.flatMap((s) => s.keys)).toEqual(['b']);
    expect(slices.flatMap((s) => s.quotas.map((q) => q.name))).toEqual(['sl']);
  });

  it('follows rows that compaction moved while a pass was under way', () => {
    // One shard, so every key is in one table. 64 keys idle at T0 + 1 min, 8 keys a minute later.
    const e = new Engine([sliding], { shards: 1 });
    for (let i = 0; i < 64; i++) acquire(e, `early${i}`, T0, 'sl');
    for (let i = 0; i < 8; i++) acquire(e, `late${i}`, T0 + 50_000, 'sl');
    collectAll(e, T0 + 50_000);
    for (let i = 0; i < 8; i++) acquire(e, `late${i}`, T0 + 55_000, 'sl');

    const first = e.collectChanged(all, 1, T0 + 55_000);
    expect(first.rows.keys).toEqual(['late0']);
    // The early keys go idle and are dropped; the table compacts and the late keys move down.
    e.advance(T0 + 75_000);
    expect(e.footprint().keys).toBe(8);
    let cursor = first.next;
    const rest: string[] = [];
    while (cursor !== undefined) {
      const { rows, next } = e.collectChanged(all, 1, T0 + 75_000, cursor);
      rest.push(...rows.keys);
      cursor = next;
    }
    expect(rest.sort()).toEqual(['late1', 'late2', 'late3', 'late4', 'late5', 'late6', 'late7']);
  });

  it('marks the rows of waiters admitted by the timer (a write without a lookup)', () => {
    const q: QuotaSpec = {
      name: 'pm',
      limits: [limit(1, MINUTE, 'fixed_window')],
      queue: { maxSize: 5, maxWaitMs: 2 * MINUTE },
    };
    const e = new Engine([q]);
    acquire(e, 'k', T0);
    const waiting = e.acquire({ key: 'k', quota: 'pm', wait: true }, T0 + 1);
    expect(waiting).toBeInstanceOf(PendingAcquire);
    collectAll(e, T0 + 2);
    e.advance(T0 + MINUTE);
    expect((waiting as PendingAcquire).settled?.code).toBe('OK');
    const { slices } = collectAll(e, T0 + MINUTE);
    const rows = slices[0]!;
    expect(rows.keys).toEqual(['k']);
    expect(rows.state[5]).toBe(1); // the waiter's charge, in the new window
    expect(rows.state[3]).toBe(T0 + MINUTE);
  });

  it('keeps leases with their row; a release marks the row again', () => {
    const q: QuotaSpec = {
      name: 'c',
      limits: [limit(100, MINUTE, 'fixed_window')],
      concurrency: { max: 2, leaseTtlMs: 5 * MINUTE },
    };
    const e = new Engine([q]);
    const lease = acquire(e, 'k', T0, 'c');
    const rows = collectAll(e, T0 + 1).slices[0]!;
    expect(rows.leases[0]).toEqual([
      { id: lease.leaseId, requestId: lease.requestId, expiresAt: T0 + 5 * MINUTE },
    ]);
    expect(rows.idleAt[0]).toBe(T0 + 5 * MINUTE);
    expect(e.release({ key: 'k', quota: 'c', leaseId: lease.leaseId }, T0 + 2).ok).toBe(true);
    const after = collectAll(e, T0 + 3).slices[0]!;
    expect(after.keys).toEqual(['k']);
    expect(after.leases[0]).toBeUndefined();
  });

  it('reports keys dropped while changed (a reset), not keys that went idle as stored', () => {
    const e = new Engine([perMinute]);
    acquire(e, 'reset-me', T0);
    acquire(e, 'idle', T0);
    collectAll(e, T0);
    acquire(e, 'reset-me', T0 + 1);
    expect(e.reset({ key: 'reset-me', quota: 'pm' }, T0 + 2)).toEqual({ ok: true, value: true });
    e.advance(T0 + MINUTE + 2000); // 'idle' is dropped unchanged since it was collected
    expect(e.footprint().keys).toBe(0);
    const { keys, slices } = collectAll(e, T0 + MINUTE + 2000);
    expect(keys).toEqual([]);
    expect(goneOf(slices)).toEqual(['pm/reset-me']);
  });

  it('keeps dropped keys across a change of layout, and marks every converted row', () => {
    const e = new Engine([perMinute]);
    acquire(e, 'a', T0);
    acquire(e, 'b', T0);
    collectAll(e, T0);
    e.reset({ key: 'a', quota: 'pm' }, T0 + 1);
    e.setQuotas([{ name: 'pm', limits: [limit(100, 2 * MINUTE, 'fixed_window')] }], T0 + 2);
    const { keys, slices } = collectAll(e, T0 + 3);
    expect(keys).toEqual(['b']);
    expect(goneOf(slices)).toEqual(['pm/a']);
    expect(slices[0]!.quotas[0]!.limits[0]!.windowMs).toBe(2 * MINUTE);
  });

  it('marks token buckets whose burst changed in place', () => {
    const bucket = (burst: number): QuotaSpec => ({
      name: 'tb',
      limits: [{ ...limit(10, MINUTE, 'token_bucket'), burst }],
    });
    const e = new Engine([bucket(20)]);
    acquire(e, 'k', T0, 'tb', 5);
    collectAll(e, T0);
    e.setQuotas([bucket(10)], T0 + 1);
    expect(collectAll(e, T0 + 1).keys).toEqual(['k']);
  });

  it('marks again on request: a whole quota, or keys whose write failed', () => {
    const e = new Engine([perMinute]);
    for (const k of ['a', 'b', 'c']) acquire(e, k, T0);
    collectAll(e, T0);
    e.markChanged('pm');
    expect(collectAll(e, T0).keys).toEqual(['a', 'b', 'c']);
    e.markChanged('pm', ['b', 'not-held']);
    const { keys, slices } = collectAll(e, T0);
    expect(keys).toEqual(['b']);
    expect(goneOf(slices)).toEqual(['pm/not-held']);
    e.markChanged('no-such-quota', ['x']); // ignored
  });

  it('forgets nothing for quotas it stopped persisting', () => {
    const e = new Engine([perMinute]);
    acquire(e, 'a', T0);
    collectAll(e, T0);
    acquire(e, 'a', T0 + 1);
    collectAll(e, T0 + 1, 10, () => false); // no longer persisted
    e.reset({ key: 'a', quota: 'pm' }, T0 + 2);
    expect(goneOf(collectAll(e, T0 + 3).slices)).toEqual([]);
  });

  it('tells a quota defined again from the one it replaces', () => {
    const e = new Engine([perMinute]);
    const before = e.generationOf('pm');
    e.setQuotas([], T0);
    expect(e.generationOf('pm')).toBeUndefined();
    e.setQuotas([perMinute], T0);
    expect(e.generationOf('pm')).not.toBe(before);
  });
});

describe('restoreStoredKey', () => {
  /** Every changed row of `from`, loaded into `to` as a host restoring its store would. */
  function restoreAll(from: Engine, to: Engine, now: number): void {
    for (const rows of collectAll(from, now).slices) {
      const layouts = rows.quotas.map((q) => to.storedLayout(q.name, q.limits, q.stride));
      let offset = 0;
      rows.keys.forEach((key, i) => {
        const layout = layouts[rows.quota[i]!]!;
        to.restoreStoredKey(layout, key, rows.state, offset, rows.leases[i] ?? [], now);
        offset += layout.stride;
      });
    }
  }

  it('brings back counts and leases; the restored rows are stored as they are', () => {
    const c: QuotaSpec = {
      name: 'c',
      limits: [limit(3, MINUTE, 'sliding_window')],
      concurrency: { max: 1, leaseTtlMs: MINUTE },
    };
    const a = new Engine([perMinute, c]);
    for (let i = 0; i < 3; i++) acquire(a, 'u', T0 + i);
    acquire(a, 'v', T0, 'c');
    const b = new Engine([perMinute, c]);
    restoreAll(a, b, T0 + 10);
    expect(b.stats({ key: 'u', quota: 'pm' }, T0 + 10)).toEqual(
      a.stats({ key: 'u', quota: 'pm' }, T0 + 10),
    );
    expect(acquire(b, 'v', T0 + 10, 'c').code).toBe('CONCURRENCY_LIMITED');
    expect(collectAll(b, T0 + 10).keys).toEqual(['v']); // only the refused acquire wrote
  });

  it('marks rows that had to be converted to a changed layout', () => {
    const a = new Engine([perMinute]);
    acquire(a, 'u', T0);
    const b = new Engine([{ name: 'pm', limits: [limit(100, 2 * MINUTE, 'fixed_window')] }]);
    restoreAll(a, b, T0 + 10);
    expect(b.stats({ key: 'u', quota: 'pm' }, T0 + 10)).toMatchObject({
      value: { limits: [{ used: 1 }] },
    });
    expect(collectAll(b, T0 + 10).keys).toEqual(['u']);
  });

  it('keeps the newer state of a key the engine holds already, and skips unknown quotas', () => {
    const a = new Engine([perMinute]);
    for (let i = 0; i < 5; i++) acquire(a, 'u', T0);
    const b = new Engine([perMinute]);
    acquire(b, 'u', T0 + 1);
    restoreAll(a, b, T0 + 2);
    expect(b.stats({ key: 'u', quota: 'pm' }, T0 + 2)).toMatchObject({
      value: { limits: [{ used: 1 }] },
    });
    const none = new Engine([]);
    const layout = none.storedLayout('pm', perMinute.limits, 6);
    expect(none.restoreStoredKey(layout, 'u', new Float64Array(6), 0, [], T0)).toBe(
      'unknown-quota',
    );
  });

  it('stores which sliding windows keep a log, and reads rows stored before logs as sub-buckets', () => {
    // 7 a minute: a log of 7 units is 13 numbers, as 10 sub-buckets of 6 s are (2 + 11).
    const c: QuotaSpec = { name: 'c', limits: [limit(7, MINUTE, 'sliding_window')] };
    const a = new Engine([c]);
    acquire(a, 'u', T0, 'c');
    const { slices } = collectAll(a, T0);
    expect(slices[0]!.quotas[0]!.limits).toEqual([
      { ...c.limits[0], log: { size: 7, units: true } },
    ]);
    expect(slices[0]!.quotas[0]!.stride).toBe(3 + 13);

    // A row written before logs: the same limits without the mark, three requests in the
    // sub-bucket of T0..T0+6 s, which counted them until T0 + 66 s.
    const head = T0 / 6000;
    const row = new Float64Array(16);
    row.set([T0, 3, 0, head, 3]);
    row[5 + (head % 11)] = 3;
    const b = new Engine([c]);
    const layout = b.storedLayout('c', c.limits, 16);
    expect(b.restoreStoredKey(layout, 'u', row, 0, [], T0 + 10)).toBe('loaded');
    expect(b.stats({ key: 'u', quota: 'c' }, T0 + 10)).toMatchObject({
      value: { limits: [{ used: 3 }] },
    });
    for (let i = 0; i < 4; i++) expect(acquire(b, 'u', T0 + 10, 'c').code).toBe('OK');
    expect(acquire(b, 'u', T0 + 10, 'c').retryAfterMs).toBe(66_000 - 10);
    expect(acquire(b, 'u', T0 + 66_000, 'c').code).toBe('OK');
  });

  it('refuses a layout whose rows do not fit its limits', () => {
    const e = new Engine([perMinute]);
    expect(() => e.storedLayout('pm', perMinute.limits, 7)).toThrow(/do not match/);
    expect(() => e.storedLayout('pm', [{ ...perMinute.limits[0]!, windowMs: 0 }], 6)).toThrow(
      /stored layout of pm/,
    );
    const log = { ...sliding.limits[0]!, log: { size: 65, units: true } };
    expect(() => e.storedLayout('sl', [log], 3 + 6 + 65)).toThrow(/limits\[0\]\.log/);
  });
});
