import { Engine } from '@app/engine';
import { CONTRACT_DOC } from '../contract-doc/disagreements.test-util';
import { cell, codeBlockUnder, plain, tableUnder } from '../contract-doc/markdown.test-util';
import { ConfigError } from './config-error';
import { MAX_GOCC_MERGES } from './gocc-merge';
import { parseConfigFile } from './parse-config';

// GoCC applies every entry whose key_pattern matches a key, in file order, each number it sets
// (not 0) replacing the one before, over the environment's (limiter_manager.go,
// mergeConfigsForInstance). The file is read here, and each key resolved as the limiter resolves
// it: by the engine, over the quotas the file gives.
const ENV = { maxRequests: 100, maxRequestsInQueue: 400, windowMillis: 1000 };
const FILE = JSON.stringify({
  keys: [
    { key_pattern: '.*', key_pattern_is_regex: true, window_millis: 60_000 },
    {
      key_pattern: '^api-',
      key_pattern_is_regex: true,
      max_requests_per_window: 50,
      max_requests_in_queue: 5,
    },
    { key_pattern: '-batch$', key_pattern_is_regex: true, max_requests_per_window: 10 },
    { key_pattern: 'api-7', max_requests_in_queue: 9 },
    { key_pattern: 'guest', max_requests_per_window: 3 },
    { key_pattern: 'guest', window_millis: 2000 },
    { key_pattern: '^api-', key_pattern_is_regex: true, max_requests_per_window: 60 },
    { key_pattern: '^zero-', key_pattern_is_regex: true, max_requests_per_window: 0 },
  ],
});

/** The numbers a key is decided by: its quota's first limit and queue. */
function numbersFor(engine: Engine, key: string): [number, number, number] {
  const view = engine.limitsOf({ key });
  if (!view.ok) throw new Error(view.reason);
  const limit = view.value.spec.limits[0]!;
  return [limit.limit, view.value.spec.queue?.maxSize ?? 0, limit.windowMs];
}

describe('GoCC config entries that match one key merge in file order', () => {
  const engine = new Engine(parseConfigFile(FILE, { gocc: ENV }).quotas);

  it.each<[key: string, entries: string, numbers: [number, number, number]]>([
    ['other', '.*', [100, 400, 60_000]],
    ['api-1', '.*, ^api- (50, 5), ^api- again (60)', [60, 5, 60_000]],
    ['x-batch', '.*, -batch$', [10, 400, 60_000]],
    ['api-2-batch', '.*, ^api- (50, 5), -batch$ (10), ^api- again (60)', [60, 5, 60_000]],
    ['api-7', '.*, ^api-, the literal api-7 (queue 9), ^api- again', [60, 9, 60_000]],
    ['guest', '.*, guest (3), guest again (window 2 s)', [3, 400, 2000]],
    ['guest-batch', '.*, -batch$', [10, 400, 60_000]],
    ['zero-1', '.*, ^zero- (0: sets nothing)', [100, 400, 60_000]],
  ])('%s: %s', (key, _entries, numbers) => {
    expect(numbersFor(engine, key)).toEqual(numbers);
  });

  it('answers the example of docs/contract.md as its table says', () => {
    const heading = "### GoCC's config file";
    const example = codeBlockUnder(CONTRACT_DOC, heading, 'json');
    const table = tableUnder(CONTRACT_DOC, heading);
    const fromDocs = new Engine(parseConfigFile(example, { gocc: ENV }).quotas);

    const rows = table.rows.map((row) => {
      const key = plain(cell(table, row, 'key'));
      const shown = ['limit per window', 'queue', 'window'].map((c) =>
        parseInt(cell(table, row, c)),
      );
      return { key, numbers: numbersFor(fromDocs, key), shown };
    });

    expect(rows.length).toBeGreaterThan(0);
    for (const { key, numbers, shown } of rows)
      expect({ key, numbers }).toEqual({ key, numbers: shown });
  });

  it('gives every merge a stable name of its own and keeps the entries’ names', () => {
    const names = (text: string): string[] =>
      parseConfigFile(text, { gocc: ENV }).quotas.map((q) => q.name);

    const first = names(FILE);

    expect(first).toEqual(names(FILE));
    expect(first).toEqual(expect.arrayContaining(['default', 'gocc:guest', 'gocc:api-7']));
    expect(first.filter((name) => name.startsWith('gocc:merged:')).length).toBeGreaterThan(0);
    expect(new Set(first).size).toBe(first.length);
  });

  it('refuses a file whose regexes could combine more ways than the limit, naming keys', () => {
    const setters = (field: string) =>
      Array.from({ length: 11 }, (_, i) => ({
        key_pattern: `${field}${i}`,
        key_pattern_is_regex: true,
        [field]: i + 1,
      }));
    const keys = [
      ...setters('max_requests_per_window'),
      ...setters('max_requests_in_queue'),
      ...setters('window_millis'),
    ];

    const read = (): unknown => parseConfigFile(JSON.stringify({ keys }), { gocc: ENV });

    expect(read).toThrow(ConfigError);
    expect(read).toThrow(new RegExp(`keys: .*more than ${MAX_GOCC_MERGES} combinations`));
  });
});
