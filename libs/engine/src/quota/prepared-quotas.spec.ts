import { Engine } from '../engine';
import { InvalidQuotaError } from '../errors';
import { PendingAcquire } from '../shard/waiters';
import type { Decision, QuotaSpec } from '../types';

const T0 = 1_800_000_000_000;
const quota = (name: string, limit: number, match?: string, maxSize = 0): QuotaSpec => ({
  name,
  ...(match !== undefined && { match }),
  limits: [{ name: 'rpm', unit: 'requests', limit, windowMs: 60_000, algorithm: 'fixed_window' }],
  ...(maxSize > 0 && { queue: { maxSize, maxWaitMs: 60_000 } }),
});
const base = [quota('default', 100), quota('a', 3, 'a-*'), quota('b', 3, 'b-*'), quota('c', 3)];

function answer(result: Decision | PendingAcquire): Decision {
  if (result instanceof PendingAcquire) throw new Error('waits');
  return result;
}

/** Prepares `quotas` one unit at a time (the most steps a host could take). */
function prepared(engine: Engine, quotas: readonly QuotaSpec[]) {
  const set = engine.prepareQuotas(quotas);
  let steps = 1;
  while (!set.step(1)) steps++;
  return { set, steps };
}

describe('Engine.prepareQuotas / commitQuotas', () => {
  it('changes nothing until the commit, then what setQuotas would, counts kept', () => {
    const engine = new Engine(base, { shards: 4, idPrefix: 't' });
    expect(answer(engine.acquire({ key: 'a-1' }, T0)).remaining).toBe(2);
    expect(answer(engine.acquire({ key: 'b-1' }, T0)).remaining).toBe(2);
    const next = [quota('default', 100), quota('a', 3, 'a-*'), quota('b', 5, 'b-*')];
    const { set, steps } = prepared(engine, next);
    expect(steps).toBeGreaterThan(next.length); // the work came in units
    expect(engine.quotas().map((q) => q.name)).toEqual(['default', 'a', 'b', 'c']);
    expect(engine.resolve(undefined, 'b-1')?.limits[0]?.limit).toBe(3);
    engine.commitQuotas(set, T0);
    expect(engine.quotas().map((q) => q.name)).toEqual(['default', 'a', 'b']);
    expect(answer(engine.acquire({ key: 'a-1' }, T0)).remaining).toBe(1); // unchanged: counts kept
    expect(answer(engine.acquire({ key: 'b-1' }, T0)).remaining).toBe(3); // 5, one used before
    expect(answer(engine.acquire({ key: 'x', quota: 'c' }, T0)).code).toBe('UNKNOWN_QUOTA');
  });

  it('is right when another set came in force between preparing and committing', () => {
    const engine = new Engine(base, { shards: 4, idPrefix: 't' });
    answer(engine.acquire({ key: 'a-1' }, T0));
    answer(engine.acquire({ key: 'c', quota: 'c' }, T0));
    const generation = engine.generationOf('c');
    const { set } = prepared(engine, [quota('default', 100), quota('a', 3, 'a-*'), quota('c', 3)]);
    // Meanwhile: `a` changes, `c` goes away (its count with it), `d` comes.
    engine.setQuotas([quota('default', 100), quota('a', 9, 'a-*'), quota('d', 1, 'd-*')], T0);
    engine.commitQuotas(set, T0);
    expect(engine.quotas().map((q) => q.name)).toEqual(['default', 'a', 'c']);
    expect(answer(engine.acquire({ key: 'a-1' }, T0))).toMatchObject({ limit: 3, remaining: 1 });
    // `c` came back: a new quota, its old count gone with the one removed meanwhile.
    expect(answer(engine.acquire({ key: 'c', quota: 'c' }, T0)).remaining).toBe(2);
    expect(engine.generationOf('c')).not.toBe(generation);
    expect(answer(engine.acquire({ key: 'd-1' }, T0)).quota).toBe('default');
  });

  it('answers the waiters of a quota the commit removes, and of none it keeps', async () => {
    const engine = new Engine([quota('default', 100), quota('q', 1, 'q-*', 5)], { shards: 1 });
    answer(engine.acquire({ key: 'q-1' }, T0));
    const waiting = engine.acquire({ key: 'q-1', wait: true }, T0);
    if (!(waiting instanceof PendingAcquire)) throw new Error('expected a waiter');
    let settled: Decision | undefined;
    void waiting.result.then((d) => (settled = d));
    const same = engine.prepareQuotas([quota('default', 100), quota('q', 1, 'q-*', 5)]);
    same.step(Infinity);
    engine.commitQuotas(same, T0);
    await Promise.resolve();
    expect(settled).toBeUndefined();
    const without = engine.prepareQuotas([quota('default', 100)]);
    without.step(Infinity);
    engine.commitQuotas(without, T0);
    await Promise.resolve();
    expect(settled).toMatchObject({ allowed: false, code: 'UNKNOWN_QUOTA' });
  });

  it('refuses an invalid set at its first problem, on every step after, changing nothing', () => {
    const engine = new Engine(base, { shards: 1 });
    const broken = [quota('default', 100), quota('a', -1, 'a-*'), quota('a', 2)];
    const set = engine.prepareQuotas(broken);
    expect(() => set.step(Infinity)).toThrow(InvalidQuotaError);
    expect(() => set.step(1)).toThrow('limits[0].limit');
    expect(() => engine.commitQuotas(set, T0)).toThrow('not prepared');
    expect(engine.quotas()).toEqual(base);
    const twice = engine.prepareQuotas([quota('default', 100), quota('x', 1), quota('x', 2)]);
    expect(() => twice.step(Infinity)).toThrow('quota "x": name: is defined twice');
  });
});
