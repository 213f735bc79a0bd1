import { MAX_TOP_REFUSED_KEY_LENGTH, parseStatsReport } from '@app/contracts';
import { RefusedKeys } from './refused-keys';
import { statsReport } from './stats-reporter';

const shown = (taken: Map<string, { key: string; count: number; error: number }[]>) =>
  Object.fromEntries(
    [...taken].map(([q, keys]) => [q, keys.map((r) => `${r.key}:${r.count}/${r.error}`).join(' ')]),
  );

describe('RefusedKeys: the top refused keys per quota of one report period', () => {
  it('counts per quota, and each take starts a new period', () => {
    const refused = new RefusedKeys(10, 2);
    for (const key of ['a', 'a', 'b', 'c']) refused.refused('api', key);
    refused.refused('login', 'x');
    expect(shown(refused.take())).toEqual({ api: 'a:2/0 c:2/1', login: 'x:1/0' });
    expect(shown(refused.take())).toEqual({});
    refused.refused('login', 'y');
    expect(shown(refused.take())).toEqual({ login: 'y:1/0' });
  });

  it('tracks at most maxQuotas quotas in a period, and leaves over-long keys out', () => {
    const refused = new RefusedKeys(3, 2);
    for (let q = 0; q < 10; q++) for (let i = 0; i < 50; i++) refused.refused(`q${q}`, `k${i}`);
    refused.refused('q0', 'x'.repeat(MAX_TOP_REFUSED_KEY_LENGTH + 1));
    const taken = refused.take();
    expect([...taken.keys()]).toEqual(['q0', 'q1', 'q2']);
    for (const keys of taken.values()) expect(keys).toHaveLength(2);
    expect([...taken.values()].flat().every((r) => r.key.length <= 3)).toBe(true);
  });

  it('goes into the stats report of the quotas in force, which the admin parses back', () => {
    const refused = new RefusedKeys();
    refused.refused('api', 'alice');
    refused.refused('gone', 'bob'); // a quota no longer in force: left out
    const counters = [{ quota: 'api', approved: 1, denied: 1, queued: 0, activeKeys: 1 }];
    const report = statsReport('r', 1, counters, () => 'local', refused.take());
    const parsed = parseStatsReport(new Uint8Array(Buffer.from(JSON.stringify(report))));
    expect(parsed?.quotas).toEqual([
      { ...counters[0], scope: 'local', topRefused: [{ key: 'alice', count: 1, error: 0 }] },
    ]);
  });
});
