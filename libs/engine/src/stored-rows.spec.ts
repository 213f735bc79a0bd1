import { Engine, type LimitSpec, type QuotaSpec } from './index';

// Stored rows are hostile input (issue 25 point 5): a row whose numbers no engine could have
// written is left out, naming the field, and the key starts empty. Each algorithm judges its own.
const T0 = 1_800_000_000_000;
const MINUTE = 60_000;

const limit = (algorithm: LimitSpec['algorithm'], max: number): LimitSpec => ({
  name: 'l',
  unit: 'requests',
  limit: max,
  windowMs: MINUTE,
  algorithm,
});

/** A row of quota `q` as the engine keeps it after `uses` requests of key `k`. */
function storedRow(q: QuotaSpec, uses: number): { engine: Engine; row: Float64Array } {
  const engine = new Engine([q], { shards: 1 });
  for (let i = 0; i < uses; i++) engine.acquire({ key: 'k', quota: q.name }, T0 + i * 100);
  const snapshot = engine.snapshot(T0 + 1000).quotas[0]!;
  return { engine, row: Float64Array.from(snapshot.rows) };
}

function restored(q: QuotaSpec, row: Float64Array) {
  const engine = new Engine([q], { shards: 1 });
  const snapshot = new Engine([q]).snapshot(T0).quotas[0]!;
  const layout = engine.storedLayout(q.name, snapshot.limits, snapshot.stride);
  return { engine, outcome: engine.restoreStoredKey(layout, 'k', row, 0, [], T0 + 1000) };
}

// Row: [statsWindow, approved, denied, then the limit's state at 3].
const cases: [string, LimitSpec, number, number, string][] = [
  ['fixed: used below 0', limit('fixed_window', 5), 5, -1e9, 'l.used'],
  ['fixed: used NaN', limit('fixed_window', 5), 5, NaN, 'l.used'],
  ['fixed: used a fraction', limit('fixed_window', 5), 5, 2.5, 'l.used'],
  ['fixed: a window end far from its start', limit('fixed_window', 5), 4, 8.64e15, 'l.window'],
  ['fixed: a window start not an instant', limit('fixed_window', 5), 3, Infinity, 'l.window'],
  ['bucket: a deficit below 0', limit('token_bucket', 5), 3, -1, 'l.deficit'],
  ['bucket: more owed than one burst', limit('token_bucket', 5), 3, 3 * 5 * MINUTE, 'l.deficit'],
  ['bucket: a refill instant NaN', limit('token_bucket', 5), 4, NaN, 'l.lastRefill'],
  ['buckets: a head that is no sub-bucket', limit('sliding_window', 500), 3, 1.5, 'l.head'],
  ['buckets: a total not their sum', limit('sliding_window', 500), 4, 7, 'l.total'],
  ['buckets: a sub-bucket below 0', limit('sliding_window', 500), 5, -3, 'l.buckets'],
  ['log: seen not an instant', limit('sliding_window', 5), 3, -1, 'l.seen'],
  ['log: a start outside the log', limit('sliding_window', 5), 4, 5, 'l.start'],
  ['log: more entries than it holds', limit('sliding_window', 5), 5, 6, 'l.count'],
  ['log: a total not its entries', limit('sliding_window', 5), 6, 1, 'l.total'],
  ['log: entries out of order', limit('sliding_window', 5), 10, T0 - 1, 'l.entries[1]'],
  ['log: a carry below 0', limit('sliding_window', 5), 7, -2, 'l.carry'],
  ['header: approved NaN', limit('fixed_window', 5), 1, NaN, 'approved'],
];

describe('stored rows (issue 25 point 5)', () => {
  it.each(cases)('leaves out %s', (_name, spec, at, value, field) => {
    const q: QuotaSpec = { name: 'q', limits: [spec] };
    const { row } = storedRow(q, 3);
    expect(restored(q, row).outcome).toBe('loaded');
    row[at] = value;
    const { engine, outcome } = restored(q, row);
    expect(outcome).toEqual({ unreadable: expect.stringMatching(new RegExp(`^${escape(field)}`)) });
    expect(engine.footprint().keys).toBe(0);
    expect(engine.stats({ key: 'k', quota: 'q' }, T0 + 1000)).toMatchObject({
      value: { limits: [{ used: 0, remaining: spec.limit }] },
    });
  });

  it('loads a row dated after now (the clock was ahead when it was saved), locking one window', () => {
    const q: QuotaSpec = { name: 'q', limits: [limit('fixed_window', 2)] };
    const engine = new Engine([q], { shards: 1 });
    engine.acquire({ key: 'k', quota: 'q', cost: 2 }, T0 + 3_600_000);
    const snapshot = engine.snapshot(T0 + 3_600_000).quotas[0]!;
    const { engine: later, outcome } = restored(q, Float64Array.from(snapshot.rows));
    expect(outcome).toBe('loaded');
    const refused = later.acquire({ key: 'k', quota: 'q' }, T0 + 1000);
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: MINUTE });
  });

  it('counts the rows of a snapshot it leaves out', () => {
    const q: QuotaSpec = { name: 'q', limits: [limit('token_bucket', 5)] };
    const engine = new Engine([q], { shards: 1 });
    for (const key of ['a', 'b', 'c']) engine.acquire({ key, quota: 'q' }, T0);
    const snapshot = engine.snapshot(T0);
    const rows = [...snapshot.quotas[0]!.rows];
    rows[3] = -5; // a's deficit
    const tampered = { ...snapshot, quotas: [{ ...snapshot.quotas[0]!, rows }] };
    const into = new Engine([q], { shards: 1 });
    expect(into.restore(tampered, T0)).toBe(1);
    expect(into.footprint().keys).toBe(2);
  });
});

function escape(text: string): string {
  return text.replace(/[.[\]]/g, (c) => `\\${c}`);
}
