import {
  CHANGE_COMMIT_KEY,
  changePartKey,
  encodeChange,
  encodeEntry,
  type ControlProvider,
  type ControlQuota,
} from '@app/contracts';
import { ControlEntries } from './control-entries';

const quota = (name: string, limit = 10): ControlQuota => ({
  spec: {
    name,
    match: `${name}-*`,
    limits: [{ name: 'rps', unit: 'requests', limit, windowMs: 1000, algorithm: 'fixed_window' }],
  },
  version: 1,
  updatedAt: 1,
});
const provider = (name: string, enabled = true): ControlProvider => ({
  name,
  enabled,
  models: [{ model: `${name}-m`, maxRpm: 1, maxTpm: 2, maxRpd: 3 }],
});
const putQuota = (entries: ControlEntries, q: ControlQuota): string | undefined => {
  const { key, value } = encodeEntry({ kind: 'quota', quota: q });
  return entries.put(key, value);
};
const putProvider = (entries: ControlEntries, p: ControlProvider): string | undefined => {
  const { key, value } = encodeEntry({ kind: 'provider', provider: p });
  return entries.put(key, value);
};
const keyOf = (q: ControlQuota): string => encodeEntry({ kind: 'quota', quota: q }).key;

describe('ControlEntries', () => {
  it('builds the set sorted by name, whatever the order of arrival', () => {
    const entries = new ControlEntries();
    putQuota(entries, quota('zeta'));
    putProvider(entries, provider('openai'));
    putQuota(entries, quota('alpha'));
    putProvider(entries, provider('gemini', false));
    const set = entries.toSet();
    expect(set.quotas.map((q) => q.spec.name)).toEqual(['alpha', 'zeta']);
    expect(set.providers.map((p) => p.name)).toEqual(['gemini', 'openai']);
  });

  it('replaces a key on PUT and drops it on DEL', () => {
    const entries = new ControlEntries();
    putQuota(entries, quota('api', 10));
    putQuota(entries, quota('api', 20));
    expect(entries.toSet().quotas).toEqual([quota('api', 20)]);
    entries.remove(keyOf(quota('api')));
    expect(entries.toSet()).toEqual({ quotas: [], providers: [] });
  });

  it('keeps the last good value of a key whose new value is refused, and reports why', () => {
    const entries = new ControlEntries();
    putQuota(entries, quota('api', 10));
    const problem = entries.put(keyOf(quota('api')), '{"spec":{"name":"api"},"version":0}');
    expect(problem).toContain('version');
    expect(entries.toSet().quotas).toEqual([quota('api', 10)]);
    // A refused value for a key never seen is simply absent.
    expect(entries.put(keyOf(quota('new')), 'nope')).toContain('is not JSON');
    expect(entries.size).toBe(1);
  });

  it('a replay drops the keys it did not deliver, and keeps those it did', () => {
    const entries = ControlEntries.from({
      quotas: [quota('kept', 1), quota('gone'), quota('bad', 5)],
      providers: [provider('openai')],
    });
    entries.beginSnapshot();
    putQuota(entries, quota('kept', 2));
    entries.put(keyOf(quota('bad')), '{}'); // delivered, refused: the stored value stays
    putQuota(entries, quota('fresh'));
    expect(entries.endSnapshot().sort()).toEqual(
      [
        keyOf(quota('gone')),
        encodeEntry({ kind: 'provider', provider: provider('openai') }).key,
      ].sort(),
    );
    expect(entries.toSet()).toEqual({
      quotas: [quota('bad', 5), quota('fresh'), quota('kept', 2)],
      providers: [],
    });
    // Outside a replay nothing is dropped.
    expect(entries.endSnapshot()).toEqual([]);
    expect(entries.size).toBe(3);
  });

  it('a DEL during a replay counts as delivered (and removes)', () => {
    const entries = ControlEntries.from({ quotas: [quota('a')], providers: [] });
    entries.beginSnapshot();
    entries.remove(keyOf(quota('a')));
    expect(entries.endSnapshot()).toEqual([]);
    expect(entries.size).toBe(0);
  });
});

describe('ControlEntries with a change of many entries', () => {
  const change = (ops: [string, string | null][]) => {
    const { parts, commit } = encodeChange('c1', ops, 300);
    return { parts: parts.map((part, i) => [changePartKey(i), part] as const), commit };
  };

  it('serves none of it until its commit, then all of it in one step', () => {
    const entries = new ControlEntries();
    putQuota(entries, quota('kept', 1));
    putQuota(entries, quota('dropped', 1));
    entries.takeChanged();
    const imported = Array.from({ length: 10 }, (_, i) => quota(`imp-${i}`, i + 1));
    const { parts, commit } = change([
      ...imported.map((q) => {
        const { key, value } = encodeEntry({ kind: 'quota', quota: q });
        return [key, value] as [string, string];
      }),
      [keyOf(quota('dropped')), null],
    ]);
    expect(parts.length).toBeGreaterThan(2);
    for (const [key, value] of parts) expect(entries.put(key, value)).toBeUndefined();
    expect(entries.takeChanged()).toBe(false);
    expect(entries.toSet().quotas.map((q) => q.spec.name)).toEqual(['dropped', 'kept']);

    expect(entries.put(CHANGE_COMMIT_KEY, commit)).toBeUndefined();
    expect(entries.takeChanged()).toBe(true);
    expect(entries.toSet().quotas).toEqual(
      [...imported, quota('kept', 1)].sort((a, b) => (a.spec.name < b.spec.name ? -1 : 1)),
    );
  });

  it('reports the entries of a part it refuses, and serves the others at the commit', () => {
    const entries = new ControlEntries();
    const { parts, commit } = change([
      [keyOf(quota('good')), JSON.stringify(quota('good'))],
      [keyOf(quota('bad')), '{"spec":{"name":"bad"},"version":0}'],
    ]);
    const problems = parts.map(([key, value]) => entries.put(key, value)).join();
    expect(problems).toContain('version');
    entries.put(CHANGE_COMMIT_KEY, commit);
    expect(entries.toSet().quotas).toEqual([quota('good')]);
  });
});
