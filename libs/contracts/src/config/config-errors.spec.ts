import { ConfigError, type ConfigIssue } from './config-error';
import { parseConfigFile } from './parse-config';

function refusal(text: string, source?: string): ConfigError {
  try {
    parseConfigFile(text, source === undefined ? {} : { source });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('the config was accepted');
}

function brief(issue: ConfigIssue): string {
  return `${issue.line ?? '?'} ${issue.path}`;
}

describe('config file: refused files name the line and the field', () => {
  it.each<[string, string, string, RegExp]>([
    [
      'unknown duration',
      'quotas:\n  - name: a\n    limits:\n      - { name: r, limit: 1, window: 1q }\n',
      '4 quotas[0].limits[0].window',
      /duration such as 250ms/,
    ],
    [
      'negative limit',
      'quotas:\n  - name: a\n    limits:\n      - name: r\n        limit: -1\n        window: 1s\n',
      '5 quotas[0].limits[0].limit',
      /integer >= 0/,
    ],
    [
      'fractional limit',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1.5, window: 1s }]\n',
      '3 quotas[0].limits[0].limit',
      /integer >= 0/,
    ],
    [
      'string limit',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: "10", window: 1s }]\n',
      '3 quotas[0].limits[0].limit',
      /integer/,
    ],
    [
      'clientOverrides not a boolean',
      'quotas:\n  - name: a\n    clientOverrides: "yes"\n',
      '3 quotas[0].clientOverrides',
      /must be true or false/,
    ],
    [
      'windowMs zero',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, windowMs: 0 }]\n',
      '3 quotas[0].limits[0].windowMs',
      /integer >= 1/,
    ],
    [
      'window and windowMs',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1s, windowMs: 1000 }]\n',
      '3 quotas[0].limits[0].window',
      /not both/,
    ],
    [
      'no window',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1 }]\n',
      '3 quotas[0].limits[0].window',
      /required/,
    ],
    [
      'unknown algorithm',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1s, algorithm: leaky_bucket }]\n',
      '3 quotas[0].limits[0].algorithm',
      /fixed_window, sliding_window, token_bucket/,
    ],
    [
      'burst zero',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1s, algorithm: token_bucket, burst: 0 }]\n',
      '3 quotas[0].limits[0].burst',
      /integer >= 1/,
    ],
    [
      'burst on a fixed window',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1s, burst: 5 }]\n',
      '3 quotas[0].limits[0].burst',
      /token_bucket/,
    ],
    [
      'calendar on hours',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 36h, align: calendar }]\n',
      '3 quotas[0].limits[0].align',
      /whole days/,
    ],
    [
      'calendar on a sliding window',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1d, align: calendar, algorithm: sliding_window }]\n',
      '3 quotas[0].limits[0].align',
      /fixed_window/,
    ],
    [
      'bad align',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1d, align: midnight }]\n',
      '3 quotas[0].limits[0].align',
      /calendar/,
    ],
    [
      'unknown time zone',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1d, align: calendar, timezone: Mars/Olympus }]\n',
      '3 quotas[0].limits[0].timezone',
      /IANA/,
    ],
    [
      'offset is not a zone',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1d, align: calendar, timezone: "+01:00" }]\n',
      '3 quotas[0].limits[0].timezone',
      /IANA/,
    ],
    [
      'timezone without align',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1d, timezone: UTC }]\n',
      '3 quotas[0].limits[0].timezone',
      /align: calendar/,
    ],
    [
      'token bucket too large to refill exactly',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1d, algorithm: token_bucket, burst: 999999999999 }]\n',
      '3 quotas[0].limits[0].burst',
      /2\^53/,
    ],
    [
      'precision out of range',
      'quotas:\n  - name: a\n    limits: [{ name: r, limit: 1, window: 1s, algorithm: sliding_window, precision: 500 }]\n',
      '3 quotas[0].limits[0].precision',
      /1\.\.120/,
    ],
    [
      'bad unit',
      'quotas:\n  - name: a\n    limits: [{ name: r, unit: Tokens, limit: 1, window: 1s }]\n',
      '3 quotas[0].limits[0].unit',
      /lowercase/,
    ],
    [
      'constructor unit',
      'quotas:\n  - name: a\n    limits: [{ name: r, unit: constructor, limit: 1, window: 1s }]\n',
      '3 quotas[0].limits[0].unit',
      /lowercase/,
    ],
    [
      'duplicate limit names',
      'quotas:\n  - name: a\n    limits:\n      - { name: r, limit: 1, window: 1s }\n      - { name: r, limit: 5, window: 1m }\n',
      '5 quotas[0].limits[1].name',
      /another limit/,
    ],
    [
      'negative queue',
      'quotas:\n  - name: a\n    queue:\n      maxSize: -1\n',
      '4 quotas[0].queue.maxSize',
      /integer >= 0/,
    ],
    [
      'queue without maxSize',
      'quotas:\n  - name: a\n    queue: { maxWaitMs: 10 }\n',
      '3 quotas[0].queue.maxSize',
      /required/,
    ],
    [
      'a wait longer than a day',
      'quotas:\n  - name: a\n    queue: { maxSize: 1, maxWaitMs: 86400001 }\n',
      '3 quotas[0].queue.maxWaitMs',
      /integer in 0\.\.86400000/,
    ],
    [
      'concurrency zero',
      'quotas:\n  - name: a\n    concurrency: { max: 0 }\n',
      '3 quotas[0].concurrency.max',
      /integer >= 1/,
    ],
    [
      'lease ttl zero',
      'quotas:\n  - name: a\n    concurrency: { max: 1, leaseTtlMs: 0 }\n',
      '3 quotas[0].concurrency.leaseTtlMs',
      /integer >= 1/,
    ],
    [
      'bad scope',
      'quotas:\n  - name: a\n    scope: global\n',
      '3 quotas[0].scope',
      /local, cluster/,
    ],
    [
      'bad store failure policy',
      'quotas:\n  - name: a\n    onStoreFailure: retry\n',
      '3 quotas[0].onStoreFailure',
      /closed, open, local/,
    ],
    ['bad lease mode', 'quotas:\n  - name: a\n    lease: on\n', '3 quotas[0].lease', /auto, off/],
    [
      'lease mode as a boolean',
      'quotas:\n  - name: a\n    lease: false\n',
      '3 quotas[0].lease',
      /auto, off/,
    ],
    ['bad lease mode in defaults', 'defaults:\n  lease: never\n', '2 defaults.lease', /auto, off/],
    [
      'shadow as string',
      'quotas:\n  - name: a\n    shadow: "yes"\n',
      '3 quotas[0].shadow',
      /true or false/,
    ],
    [
      'regex that does not compile',
      'quotas:\n  - name: a\n    match: "re:(unclosed"\n',
      '3 quotas[0].match',
      /does not compile/,
    ],
    ['empty match', 'quotas:\n  - name: a\n    match: ""\n', '3 quotas[0].match', /empty/],
    [
      'duplicate quota names',
      'quotas:\n  - name: a\n  - name: b\n  - name: a\n',
      '4 quotas[2].name',
      /another quota/,
    ],
    [
      'duplicate match patterns',
      'quotas:\n  - { name: a, match: "x-*" }\n  - { name: b, match: "x-*" }\n',
      '3 quotas[1].match',
      /same pattern as quota "a"/,
    ],
    ['bad quota name', 'quotas:\n  - name: "my quota"\n', '2 quotas[0].name', /A-Za-z0-9/],
    ['missing quota name', 'quotas:\n  - match: "a*"\n', '2 quotas[0].name', /required/],
    [
      'typo in a field',
      'quotas:\n  - name: a\n    queue: { maxsize: 5 }\n',
      '3 quotas[0].queue.maxsize',
      /not a known field/,
    ],
    ['unknown top-level field', 'quota:\n  - name: a\n', '1 quota', /not a known field/],
    ['quotas not a list', 'quotas:\n  name: a\n', '1 quotas', /list of quotas/],
    [
      'limit not a mapping',
      'quotas:\n  - name: a\n    limits: [5]\n',
      '3 quotas[0].limits[0]',
      /mapping/,
    ],
    ['bad provider', 'providers: [openai, "Open AI"]\n', '1 providers[1]', /provider name/],
    [
      'default with a match',
      'quotas:\n  - name: default\n    match: "*"\n',
      '3 quotas[0].match',
      /no match/,
    ],
    [
      'default twice',
      'defaults: { shadow: true }\nquotas:\n  - name: default\n',
      '3 quotas[0].name',
      /already set/,
    ],
    ['name in defaults', 'defaults:\n  name: x\n', '2 defaults.name', /not a known field/],
    [
      'GoCC key without pattern',
      '{"keys": [\n  {"window_millis": 10}\n]}',
      '2 keys[0].key_pattern',
      /required/,
    ],
    [
      'GoCC bad regex',
      '{"keys": [\n  {"key_pattern": "(", "key_pattern_is_regex": true}\n]}',
      '2 keys[0].key_pattern',
      /does not compile/,
    ],
    [
      'lookaround in the fourth quota',
      'quotas:\n' +
        ['a', 'b', 'c'].map((n) => `  - { name: ${n}, match: "${n}-*", limits: [] }\n`).join('') +
        '  - name: d\n    match: "re:^d-(?!admin)"\n',
      '6 quotas[3].match',
      /has lookaround "\(\?!": match regexes use RE2 syntax/,
    ],
    [
      'GoCC backreference',
      '{"keys": [\n  {"key_pattern": "^(a)\\\\1$", "key_pattern_is_regex": true}\n]}',
      '2 keys[0].key_pattern',
      /has a backreference "\\1"/,
    ],
    [
      'GoCC negative number',
      '{"keys": [\n  {"key_pattern": "a",\n   "max_requests_in_queue": -4}\n]}',
      '3 keys[0].max_requests_in_queue',
      /integer >= 0/,
    ],
    [
      'GoCC key with control character',
      '{"keys": [\n  {"key_pattern": "a\\u0001"}\n]}',
      '2 keys[0].key_pattern',
      /control/,
    ],
    ['GoCC mixed with quotas', '{"keys": [], "quotas": []}', '1 keys', /cannot be mixed/],
  ])('%s', (_name, text, where, message) => {
    const error = refusal(text);
    const [first] = error.issues;
    expect(first && brief(first)).toBe(where);
    expect(first?.message).toMatch(message);
    expect(error.message).toContain(`line ${where.split(' ')[0]}`);
  });

  it('reports YAML syntax errors with their line', () => {
    const error = refusal(
      'quotas:\n  - name: a\n    limits: [{ name: r\n  - name: b\n',
      'ratelimit.yaml',
    );
    expect(error.issues[0]?.line).toBeGreaterThanOrEqual(3);
    expect(error.message).toMatch(/^ratelimit\.yaml: /);
    expect(error.message).toMatch(/line \d+: /);
  });

  it('reports duplicate keys, which YAML and JSON would silently merge', () => {
    const error = refusal('{\n  "quotas": [],\n  "quotas": []\n}');
    expect(error.issues[0]).toMatchObject({ line: 3 });
    expect(error.message).toMatch(/unique/);
  });

  it('refuses an empty file, which is more likely half-written than meant', () => {
    expect(refusal('').message).toMatch(/empty/);
    expect(refusal('# only a comment\n').message).toMatch(/empty/);
  });

  it('refuses a document that is not a mapping', () => {
    expect(refusal('- a\n- b\n').issues[0]).toMatchObject({ line: 1, path: '' });
    expect(refusal('42').message).toMatch(/must be a mapping/);
  });

  it('refuses alias bombs', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 8; level += 1) {
      const previous = String.fromCharCode(96 + level);
      const next = String.fromCharCode(97 + level);
      bomb.push(`${next}: &${next} [${Array(10).fill(`*${previous}`).join(', ')}]`);
    }
    expect(refusal(bomb.join('\n')).message).toMatch(/alias/i);
  });

  // The `yaml` package composes recursively: deep enough nesting aborts V8 itself (no exception).
  it.each([
    [
      'deep block nesting',
      `quotas:\n${'  '.repeat(1)}${Array.from({ length: 80 }, (_, i) => `${'  '.repeat(i + 1)}a${i}:`).join('\n')} 1`,
      /nests collections more than 64 levels/,
    ],
    [
      'deep flow nesting',
      `quotas: ${'['.repeat(70)}${']'.repeat(70)}`,
      /nests collections more than 64 levels/,
    ],
    ['a bracket flood', `quotas: ${'['.repeat(200_000)}`, /opens more than 1000 \[ or \{/],
    ['several documents', 'quotas: []\n---\nquotas: []\n', /several YAML documents/],
    ['a list as a key', '? [a, b]\n: 1\n', /not a plain name/],
  ])('refuses %s before it can hurt the process', (_, text, message) => {
    expect(refusal(text).message).toMatch(message);
  });

  it('lists every problem in file order', () => {
    const error = refusal(
      'quotas:\n  - name: a\n    scope: everywhere\n    limits:\n      - { name: r, limit: -1, window: 1s }\n  - name: "b c"\n',
    );
    expect(error.issues.map(brief)).toEqual([
      '3 quotas[0].scope',
      '5 quotas[0].limits[0].limit',
      '6 quotas[1].name',
    ]);
    expect(error.message.split('\n')[0]).toBe('config: 3 problems');
  });
});
