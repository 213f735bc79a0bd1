import { parseStatsReport } from './parse-stats-report';
import { MAX_TOP_REFUSED_KEY_LENGTH, TOP_REFUSED_K } from './top-refused';

const bytes = (value: unknown): Uint8Array =>
  new Uint8Array(Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)));

const quota = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  quota: 'api',
  approved: 5,
  denied: 3,
  queued: 0,
  activeKeys: 2,
  scope: 'local',
  ...extra,
});

const report = (...quotas: unknown[]): Uint8Array =>
  bytes({ replica: 'r-1', at: 1_700_000_000_000, quotas });

const refused = (n: number, key = (i: number) => `key-${i}`) =>
  Array.from({ length: n }, (_, i) => ({ key: key(i), count: n - i, error: 0 }));

describe('parseStatsReport', () => {
  it('takes a report with the top refused keys of each quota', () => {
    const top = [
      { key: 'alice', count: 9, error: 0 },
      { key: 'bob', count: 4, error: 2 },
    ];
    expect(parseStatsReport(report(quota({ topRefused: top }), quota({ quota: 'b' })))).toEqual({
      replica: 'r-1',
      at: 1_700_000_000_000,
      quotas: [
        {
          quota: 'api',
          approved: 5,
          denied: 3,
          queued: 0,
          activeKeys: 2,
          scope: 'local',
          topRefused: top,
        },
        { quota: 'b', approved: 5, denied: 3, queued: 0, activeKeys: 2, scope: 'local' },
      ],
    });
  });

  it('takes k keys of the longest length, and an empty list as none', () => {
    const long = refused(TOP_REFUSED_K, (i) => `${i}`.padEnd(MAX_TOP_REFUSED_KEY_LENGTH, 'x'));
    expect(parseStatsReport(report(quota({ topRefused: long })))?.quotas[0]?.topRefused).toEqual(
      long,
    );
    expect(parseStatsReport(report(quota({ topRefused: [] }))))?.toBeDefined();
    expect(parseStatsReport(report(quota({ topRefused: [] })))?.quotas[0]).not.toHaveProperty(
      'topRefused',
    );
  });

  it.each<[string, unknown]>([
    [
      'a key one character too long',
      [{ key: 'k'.repeat(MAX_TOP_REFUSED_KEY_LENGTH + 1), count: 1, error: 0 }],
    ],
    ['a megabyte key', [{ key: 'k'.repeat(1 << 20), count: 1, error: 0 }]],
    ['more than k entries', refused(TOP_REFUSED_K + 1)],
    ['a hundred thousand entries', refused(100_000)],
    ['an empty key', [{ key: '', count: 1, error: 0 }]],
    ['a key that is a number', [{ key: 7, count: 1, error: 0 }]],
    ['a key that is an object', [{ key: { toString: 'x' }, count: 1, error: 0 }]],
    ['a count that is a string', [{ key: 'a', count: '1', error: 0 }]],
    ['a negative count', [{ key: 'a', count: -1, error: 0 }]],
    ['a fractional count', [{ key: 'a', count: 1.5, error: 0 }]],
    ['an unsafe count', [{ key: 'a', count: 2 ** 60, error: 0 }]],
    ['a missing error', [{ key: 'a', count: 1 }]],
    ['an error above the count', [{ key: 'a', count: 1, error: 2 }]],
    ['null as an entry', [null]],
    ['an array as an entry', [['a', 1, 0]]],
    ['an object for the list', { a: { count: 1, error: 0 } }],
    ['a string for the list', 'alice'],
    ['null for the list', null],
  ])('refuses the whole report for %s in topRefused', (_, topRefused) => {
    expect(
      parseStatsReport(report(quota({ topRefused }), quota({ quota: 'fine' }))),
    ).toBeUndefined();
  });

  it('survives deep nesting, prototype keys and garbage without throwing', () => {
    const deep = '['.repeat(5_000) + ']'.repeat(5_000);
    const inputs = [
      bytes(
        `{"replica":"r","at":1,"quotas":[{"quota":"a","approved":1,"denied":1,"queued":0,"activeKeys":0,"topRefused":${deep}}]}`,
      ),
      bytes('{"replica":"r","at":1,"quotas":[{"__proto__":{"topRefused":[]},"quota":"a"}]}'),
      report(
        quota({ topRefused: [{ key: '__proto__', count: 1, error: 0, extra: 'x'.repeat(1000) }] }),
      ),
      bytes('{"replica":"r","at":1,"quotas":[' + '{'.repeat(100)),
      new Uint8Array([0xff, 0xfe, 0x00]),
    ];
    for (const input of inputs) expect(() => parseStatsReport(input)).not.toThrow();
    // Unknown fields of an entry are dropped, not carried along.
    expect(parseStatsReport(inputs[2]!)?.quotas[0]?.topRefused).toEqual([
      { key: '__proto__', count: 1, error: 0 },
    ]);
  });
});
