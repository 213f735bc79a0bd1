import { LiveHistory, type StatsUpdateInput } from './history';
import { pickPanels } from './pick-panels';

const START = Date.parse('2024-05-01T12:00:00.000Z');

/** Two updates a second apart: quota i admitted `rates[i]` in that second. */
function historyOf(rates: Record<string, number>, maxQuotas?: number): LiveHistory {
  const history = new LiveHistory(undefined, maxQuotas);
  const at = (s: number, scale: number): StatsUpdateInput => ({
    at: new Date(START + s * 1000).toISOString(),
    replicas: 1,
    quotas: Object.entries(rates).map(([quota, rate]) => ({
      quota,
      approved: rate * scale,
      denied: 0,
      activeKeys: 1,
      queued: 0,
    })),
  });
  history.ingest(at(0, 0));
  history.ingest(at(1, 1));
  return history;
}

describe('pickPanels', () => {
  it('shows every quota the filter matches while they fit, by name', () => {
    const quotas = historyOf({ b: 1, a: 2, c: 0 }).quotas();
    expect(pickPanels(quotas, '', 3).shown.map((q) => q.name)).toEqual(['a', 'b', 'c']);
    expect(pickPanels(quotas, ' A', 3)).toMatchObject({ hidden: 0 });
    expect(pickPanels(quotas, ' A', 3).shown.map((q) => q.name)).toEqual(['a']);
  });

  it('draws the busiest when more match than fit, still by name, and counts the rest', () => {
    const quotas = historyOf({ quiet: 0, busy: 50, mid: 5, busier: 80 }).quotas();
    const pick = pickPanels(quotas, '', 2);
    expect(pick.shown.map((q) => q.name)).toEqual(['busier', 'busy']);
    expect(pick.hidden).toBe(2);
  });
});

describe('LiveHistory bound', () => {
  it('follows at most maxQuotas quotas and counts the others', () => {
    const history = historyOf({ a: 1, b: 1, c: 1 }, 2);
    expect(history.quotas().map((q) => q.name)).toEqual(['a', 'b']);
    expect(history.untracked).toBe(1);
  });
});
