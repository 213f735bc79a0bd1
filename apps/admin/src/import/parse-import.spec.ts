import {
  ConfigError,
  GOCC_DEFAULTS,
  goccDefaultQuota,
  goccQuota,
  goccQuotaName,
} from '@app/contracts';
import { CONTRACT_CONFIG_EXAMPLE } from '@app/contracts/config/contract-example.test-util';
import { parseImport } from './index';
import { MAX_IMPORT_DOCUMENT_BYTES } from './import-plan';
import { NOW, plan, refusal, where } from './import-test-helpers';

const CONTRACT_EXAMPLE = CONTRACT_CONFIG_EXAMPLE;

const NO_DEFAULT_NOTE =
  "The document sets no default quota (no `defaults:` and no quota named default), so the admin's default quota is left as it is.";
const GOCC_DEFAULT_NOTE =
  "GoCC's config has no default quota; keys that match no key_pattern keep the admin's default quota as it is.";

describe('importConfig, format yaml: this project’s config file', () => {
  it('imports the contract’s example as it is, default quota included', () => {
    expect(plan(CONTRACT_EXAMPLE)).toEqual({
      source: 'native',
      quotas: [
        {
          name: 'default',
          limits: [
            {
              name: 'rps',
              unit: 'requests',
              limit: 100,
              windowMs: 1000,
              algorithm: 'fixed_window',
            },
          ],
          queue: { maxSize: 400, maxWaitMs: 30_000 },
          // `defaults:` is laid over GoCC's default quota, which takes client overrides.
          clientOverrides: true,
        },
        {
          name: 'api',
          match: 'api-*',
          limits: [
            { name: 'rps', unit: 'requests', limit: 10, windowMs: 1000, algorithm: 'fixed_window' },
            {
              name: 'tpm',
              unit: 'tokens',
              limit: 40_000,
              windowMs: 60_000,
              algorithm: 'sliding_window',
            },
          ],
          queue: { maxSize: 100, maxWaitMs: 5000 },
          concurrency: { max: 5, leaseTtlMs: 60_000 },
          scope: 'cluster',
          onStoreFailure: 'local',
        },
      ],
      enableProviders: ['openai', 'anthropic'],
      models: [],
      usage: [],
      notes: [],
    });
  });

  const rps = (limit: number) => ({
    name: 'rps',
    unit: 'requests',
    limit,
    windowMs: 1000,
    algorithm: 'fixed_window',
  });

  it.each<[string, string, string[], string[], string[]]>([
    [
      'quotas without defaults: the environment default is not imported',
      'quotas:\n  - name: a\n    limits: [{ name: rps, limit: 5, window: 1s }]\n',
      ['a'],
      [],
      [NO_DEFAULT_NOTE],
    ],
    [
      'a quota named default is imported, first',
      'quotas:\n  - name: a\n    limits: [{ name: rps, limit: 5, window: 1s }]\n  - name: default\n    limits: [{ name: rps, limit: 7, window: 1s }]\n',
      ['default', 'a'],
      [],
      [],
    ],
    [
      'defaults: overrides part of the default quota',
      'defaults:\n  shadow: true\n',
      ['default'],
      [],
      [],
    ],
    ['providers only', 'providers: [gemini, local]\n', [], ['gemini', 'local'], [NO_DEFAULT_NOTE]],
    ['an empty mapping imports nothing', '{}\n', [], [], [NO_DEFAULT_NOTE]],
    ['an empty list of quotas', 'quotas: []\n', [], [], [NO_DEFAULT_NOTE]],
    [
      'JSON is YAML',
      '{ "quotas": [{ "name": "a", "limits": [{ "name": "rps", "limit": 5, "windowMs": 1000 }] }] }',
      ['a'],
      [],
      [NO_DEFAULT_NOTE],
    ],
  ])('%s', (_, document, quotas, providers, notes) => {
    const result = plan(document);
    expect(result.source).toBe('native');
    expect(result.quotas.map((quota) => quota.name)).toEqual(quotas);
    expect(result.enableProviders).toEqual(providers);
    expect(result.models).toEqual([]);
    expect(result.usage).toEqual([]);
    expect(result.notes).toEqual(notes);
  });

  it('keeps the fields the document gives the default quota, the environment’s for the rest', () => {
    const gocc = { maxRequests: 9, maxRequestsInQueue: 3, windowMillis: 2000 };
    const [first] = plan('defaults:\n  shadow: true\n', 'yaml', gocc).quotas;
    expect(first).toEqual({ ...goccDefaultQuota(gocc), shadow: true });
    const listed = plan(
      'quotas:\n  - name: default\n    limits: [{ name: rps, limit: 7, window: 1s }]\n',
      'yaml',
      gocc,
    ).quotas;
    expect(listed).toEqual([{ name: 'default', limits: [rps(7)] }]);
  });

  it('imports a GoCC document given as yaml, as GoCC’s (CONFIG_FILE accepts it too)', () => {
    const result = plan(
      '{"keys": [{"key_pattern": "user-1", "max_requests_per_window": 5, "max_requests_in_queue": 0, "window_millis": 1000}]}',
    );
    expect(result.source).toBe('gocc');
    expect(result.quotas).toEqual([
      goccQuota('gocc:user-1', 'user-1', { ...GOCC_DEFAULTS, maxRequests: 5 }),
    ]);
    expect(result.notes[0]).toMatch(/GoCC's \{ "keys": \[\.\.\.\] \} config.*read as format gocc/);
    expect(result.notes).toContain(GOCC_DEFAULT_NOTE);
  });
});

describe('importConfig, format gocc', () => {
  it('imports GoCC keys without the default quota, saying what came from the environment', () => {
    const gocc = { maxRequests: 50, maxRequestsInQueue: 0, windowMillis: 1000 };
    const document = JSON.stringify({
      keys: [
        {
          key_pattern: 'user-1',
          max_requests_per_window: 5,
          max_requests_in_queue: 10,
          window_millis: 60000,
        },
        { key_pattern: '^ip-[0-9]+$', key_pattern_is_regex: true, window_millis: 1000 },
        { key_pattern: 'x', max_requests_per_window: 1, comment: 'GoCC ignores this' },
      ],
      version: 2,
    });
    expect(plan(document, 'gocc', gocc)).toEqual({
      source: 'gocc',
      quotas: [
        goccQuota('gocc:user-1', 'user-1', {
          maxRequests: 5,
          maxRequestsInQueue: 10,
          windowMillis: 60_000,
        }),
        goccQuota(goccQuotaName('^ip-[0-9]+$', true), 're:^ip-[0-9]+$', gocc),
        goccQuota('gocc:x', 'x', { ...gocc, maxRequests: 1 }),
      ],
      enableProviders: [],
      models: [],
      usage: [],
      notes: [
        GOCC_DEFAULT_NOTE,
        "1 of 3 GoCC keys leave max_requests_per_window unset or 0: it takes MAX_REQUESTS = 50 from the admin's environment, fixed at import time.",
        "2 of 3 GoCC keys leave max_requests_in_queue unset or 0: they take MAX_REQUESTS_IN_QUEUE = 0 from the admin's environment, fixed at import time.",
        "1 of 3 GoCC keys leave window_millis unset or 0: it takes WINDOW_MILLIS = 1000 from the admin's environment, fixed at import time.",
        'GoCC lets a queued request wait until a window admits it; here each imported key waits at most as long as its full queue takes to drain, and never less than 30s (queue.maxWaitMs).',
        'Fields GoCC does not read were ignored: version, keys[2].comment.',
      ],
    });
  });

  it('says when an unset max_requests_per_window means unlimited', () => {
    const gocc = { maxRequests: 0, maxRequestsInQueue: 0, windowMillis: 1000 };
    const result = plan('{"keys": [{"key_pattern": "a", "window_millis": 10}]}', 'gocc', gocc);
    expect(result.notes).toContain(
      "1 of 1 GoCC key leaves max_requests_per_window unset or 0: it takes MAX_REQUESTS = 0 (unlimited) from the admin's environment, fixed at import time.",
    );
  });

  it('merges a literal key with the regexes that match it, and says what it cannot merge', () => {
    const gocc = { maxRequests: 50, maxRequestsInQueue: 0, windowMillis: 1000 };
    const document = JSON.stringify({
      keys: [
        { key_pattern: '^a', key_pattern_is_regex: true, window_millis: 60_000 },
        { key_pattern: 'b$', key_pattern_is_regex: true, max_requests_per_window: 2 },
        { key_pattern: 'ab', max_requests_in_queue: 3 },
      ],
    });

    const result = plan(document, 'gocc', gocc);

    expect(result.quotas).toEqual([
      goccQuota(goccQuotaName('^a', true), 're:^a', { ...gocc, windowMillis: 60_000 }),
      goccQuota(goccQuotaName('b$', true), 're:b$', { ...gocc, maxRequests: 2 }),
      goccQuota('gocc:ab', 'ab', { maxRequests: 2, maxRequestsInQueue: 3, windowMillis: 60_000 }),
    ]);
    expect(result.notes).toContainEqual(
      expect.stringMatching(
        /^GoCC merges the numbers of every regex key_pattern that matches a key/,
      ),
    );
  });

  it('takes an empty key list', () => {
    expect(plan('{"keys": []}', 'gocc').quotas).toEqual([]);
  });

  it('tolerates YAML syntax (JSON is YAML)', () => {
    expect(plan('keys:\n  - key_pattern: a\n', 'gocc').quotas.map((q) => q.name)).toEqual([
      'gocc:a',
    ]);
  });
});

describe('importConfig refuses documents with a ConfigError naming line and field', () => {
  it.each<[string, string, 'yaml' | 'gocc', string[], RegExp]>([
    [
      'a negative limit',
      'quotas:\n  - name: a\n    limits:\n      - name: r\n        limit: -1\n        window: 1s\n',
      'yaml',
      ['5 quotas[0].limits[0].limit'],
      /integer >= 0/,
    ],
    [
      'an unknown top-level field',
      'quotas: []\nproviderz: [openai]\n',
      'yaml',
      ['2 providerz'],
      /not a known field/,
    ],
    ['a duplicate key', 'quotas: []\nquotas: []\n', 'yaml', ['2 '], /[Uu]nique|duplicate/i],
    ['a syntax error', 'quotas: [\n  - a\n', 'yaml', ['2 '], /./],
    ['an empty document', '# nothing\n', 'yaml', ['? '], /is empty/],
    ['a list', '- a\n- b\n', 'yaml', ['1 '], /must be a mapping.*go-ratelimit/],
    ['a scalar', '42', 'gocc', ['1 '], /must be GoCC's config/],
    [
      'a native document given as gocc',
      '# mine\nquotas:\n  - name: a\n    limits: []\n',
      'gocc',
      ['2 '],
      /this project's config file.*format yaml/,
    ],
    [
      'defaults given as gocc',
      'defaults: { shadow: true }\n',
      'gocc',
      ['1 '],
      /this project's config file.*format yaml/,
    ],
    [
      'go-ratelimit given as gocc',
      'backend: yaml\nstate: {}\n',
      'gocc',
      ['2 '],
      /go-ratelimit's ratelimits\.yaml.*format yaml/,
    ],
    ['a mapping without keys, as gocc', 'other: 1\n', 'gocc', ['1 keys'], /is required/],
    [
      'a GoCC key with a negative number',
      '{\n  "keys": [\n    { "key_pattern": "a", "max_requests_per_window": -1 }\n  ]\n}\n',
      'gocc',
      ['3 keys[0].max_requests_per_window'],
      /integer >= 0/,
    ],
    [
      'a GoCC regex that does not compile',
      '{"keys": [{"key_pattern": "(", "key_pattern_is_regex": true}]}',
      'gocc',
      ['1 keys[0].key_pattern'],
      /does not compile/,
    ],
    [
      'a regex with lookaround, in the second quota',
      'quotas:\n  - { name: a, match: "a-*", limits: [] }\n  - name: b\n    match: "re:^b(?=c)"\n',
      'yaml',
      ['4 quotas[1].match'],
      /has lookaround "\(\?=": match regexes use RE2 syntax/,
    ],
    [
      'a GoCC regex with a backreference',
      '{"keys": [{"key_pattern": "^(a)\\\\1$", "key_pattern_is_regex": true}]}',
      'gocc',
      ['1 keys[0].key_pattern'],
      /has a backreference "\\1"/,
    ],
    [
      'a GoCC regex given twice',
      '{"keys": [\n  {"key_pattern": "^a", "key_pattern_is_regex": true},\n  {"key_pattern": "^a", "key_pattern_is_regex": true, "max_requests_per_window": 2}\n]}',
      'gocc',
      ['3 keys[1].key_pattern'],
      /same regex as keys\[0\].*CONFIG_FILE merges both/,
    ],
    [
      'GoCC keys mixed with quotas',
      '{"keys": [], "quotas": []}',
      'gocc',
      ['1 keys'],
      /cannot be mixed/,
    ],
    [
      'several YAML documents',
      'quotas: []\n---\nproviders: [openai]\n',
      'yaml',
      ['2 '],
      /several YAML documents/,
    ],
    ['a list as a key', 'quotas: []\n? [a, b]\n: x\n', 'yaml', ['2 '], /not a plain name/],
    [
      'a timestamp as a key',
      'state:\n  !!timestamp 2026-01-01: {}\n',
      'yaml',
      ['2 '],
      /not a plain name/,
    ],
    ['an alias as a key', 'a: &x b\n*x : 2\n', 'gocc', ['2 '], /not a plain name/],
    [
      'too many aliases',
      `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n`,
      'yaml',
      ['? '],
      /alias/i,
    ],
  ])('%s', (_, document, format, expected, message) => {
    const error = refusal(document, format);
    expect(error.source).toBe('document');
    expect(where(error).slice(0, expected.length)).toEqual(expected);
    expect(error.message).toMatch(message);
  });

  it('lists every problem of a native document in file order', () => {
    const error = refusal(
      'quotas:\n  - name: a b\n    limits: [{ name: r, limit: 1, window: 1q }]\n  - name: c\n    match: "re:("\n',
    );
    expect(where(error)).toEqual([
      '2 quotas[0].name',
      '3 quotas[0].limits[0].window',
      '5 quotas[1].match',
    ]);
  });

  it('refuses an unknown format', () => {
    let error: unknown;
    try {
      parseImport('{}', 'xml' as 'yaml', { gocc: GOCC_DEFAULTS, now: NOW });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe('document: format: must be one of: yaml, gocc');
  });
});

describe('importConfig refuses documents over 4 MiB', () => {
  const head = 'providers: [openai]\n';

  it('accepts exactly 4 MiB', () => {
    const document = head + '#'.repeat(MAX_IMPORT_DOCUMENT_BYTES - head.length);
    expect(plan(document).enableProviders).toEqual(['openai']);
  });

  it.each([
    ['one byte more', head + '#'.repeat(MAX_IMPORT_DOCUMENT_BYTES - head.length + 1)],
    // 2 bytes each in UTF-8: fewer characters than the limit, more bytes.
    ['multi-byte characters', head + '#' + 'é'.repeat(MAX_IMPORT_DOCUMENT_BYTES / 2)],
    ['far more', 'x'.repeat(MAX_IMPORT_DOCUMENT_BYTES * 2)],
  ])('%s', (_, document) => {
    const error = refusal(document);
    expect(error.message).toBe(
      'document: is more than 4194304 bytes (4 MiB), the most an import accepts; split it into several imports',
    );
  });
});

describe('importConfig reads names of inherited properties as names', () => {
  const NAMES = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty'];
  const prototypeNames = Object.getOwnPropertyNames(Object.prototype);
  afterEach(() => {
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeNames);
  });

  it.each(NAMES)('go-ratelimit: a model named %s is a model like any other', (name) => {
    const ago = (ms: number) => new Date(NOW - ms).toISOString();
    const imported = plan(
      `quotas:\n  ${name}: { max_rpm: 5 }\n` +
        `state:\n  ${name}:\n    requests: [${ago(1000)}]\n` +
        `    tokens: [{ time: ${ago(1000)}, count: 3 }]\n    day_start: ${ago(1000)}\n    day_count: 1\n`,
    );
    expect(imported.quotas.map((quota) => quota.name)).toEqual([name]);
    expect(imported.usage).toEqual([{ quota: name, key: name, cost: { requests: 1, tokens: 3 } }]);
  });

  it.each(NAMES)('JSON: %s as a field name is refused as an unknown field', (name) => {
    const error = refusal(`{ "${name}": { "polluted": 1 }, "quotas": [] }`);
    expect(error.issues.map((issue) => issue.path)).toEqual([name]);
  });

  it.each(NAMES)('native and GoCC: a quota or key pattern named %s', (name) => {
    const native = plan(
      `quotas:\n  - { name: ${name}, match: "${name}", limits: [{ name: rps, limit: 1, window: 1s }] }\n`,
    );
    expect(native.quotas.map((quota) => quota.name)).toEqual([name]);
    const gocc = plan(
      `{ "keys": [{ "key_pattern": "${name}", "max_requests_per_window": 3 }] }`,
      'gocc',
    );
    expect(gocc.quotas.map((quota) => quota.match)).toEqual([name]);
  });
});
