import { LiveHistory, type StatsUpdateInput } from './history';
import { pickPanels } from './pick-panels';

const START = Date.parse('2024-05-01T12:00:00.000Z');

/** Updates a second apart: quota i admitted `rates[i]` and refused `refused[i]` in each second. */
function historyOf(
  rates: Record<string, number>,
  refused: Record<string, number> = {},
  seconds = 1,
  maxQuotas?: number,
): LiveHistory {
  const history = new LiveHistory(undefined, maxQuotas);
  const at = (s: number): StatsUpdateInput => ({
    at: new Date(START + s * 1000).toISOString(),
    replicas: 1,
    quotas: Object.entries(rates).map(([quota, rate]) => ({
      quota,
      approved: rate * s,
      denied: (refused[quota] ?? 0) * s,
      activeKeys: 1,
      queued: 0,
    })),
  });
  for (let s = 0; s <= seconds; s++) history.ingest(at(s));
  return history;
}

const names = (quotas: readonly { name: string }[]): string[] => quotas.map((q) => q.name);

describe('pickPanels', () => {
  it('shows the busy quotas busiest first, and folds the idle ones apart by name', () => {
    const quotas = historyOf({ b: 1, a: 2, c: 0, z: 0, y: 0 }, { b: 5 }).quotas();
    const pick = pickPanels(quotas, '', 3);
    expect(names(pick.shown)).toEqual(['b', 'a']); // b: 6 decisions/s, a: 2
    expect(names(pick.idle)).toEqual(['c', 'y', 'z']);
    expect(pick.hidden).toBe(0);
    expect(names(pickPanels(quotas, ' A', 3).shown)).toEqual(['a']);
    expect(pickPanels(quotas, ' A', 3).idle).toEqual([]);
    expect(names(pickPanels(quotas, 'z', 3).idle)).toEqual(['z']);
  });

  it('breaks ties by refusals, then by name', () => {
    const quotas = historyOf({ b: 4, a: 4, c: 2 }, { c: 2 }).quotas();
    expect(names(pickPanels(quotas, '').shown)).toEqual(['c', 'a', 'b']);
  });

  it('draws the busiest when more match than fit, and counts the rest', () => {
    const quotas = historyOf({ quiet: 0, busy: 50, mid: 5, busier: 80 }).quotas();
    const pick = pickPanels(quotas, '', 2);
    expect(names(pick.shown)).toEqual(['busier', 'busy']);
    expect(pick.hidden).toBe(1);
    expect(names(pick.idle)).toEqual(['quiet']);
  });

  it('keeps a quota busy while a decision is in the window, idle once none is', () => {
    const history = new LiveHistory(10_000);
    const update = (s: number, approved: number): StatsUpdateInput => ({
      at: new Date(START + s * 1000).toISOString(),
      replicas: 1,
      quotas: [{ quota: 'a', approved, denied: 0, activeKeys: 0, queued: 0 }],
    });
    history.ingest(update(0, 0));
    expect(history.quotas()[0]!.idle).toBe(true); // no rate yet
    history.ingest(update(1, 3));
    expect(history.quotas()[0]!.idle).toBe(false);
    for (let s = 2; s <= 11; s++) history.ingest(update(s, 3));
    expect(history.quotas()[0]!.idle).toBe(false); // the busy second is still in the 10 s
    history.ingest(update(12, 3));
    expect(history.quotas()[0]!.idle).toBe(true);
  });

  it('keeps the latest update’s top refused keys per quota', () => {
    const history = new LiveHistory();
    const top = [{ key: 'alice', count: 4, error: 0 }];
    history.ingest({
      at: new Date(START).toISOString(),
      replicas: 1,
      quotas: [{ quota: 'a', approved: 0, denied: 4, activeKeys: 1, queued: 0, topRefused: top }],
    });
    expect(history.quotas()[0]!.topRefused).toEqual(top);
    history.ingest({ at: new Date(START + 1000).toISOString(), replicas: 1, quotas: [] });
    expect(history.quotas()[0]!.topRefused).toEqual([]);
  });
});
