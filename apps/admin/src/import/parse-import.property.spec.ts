import { BUILT_IN_PROVIDERS, ConfigError, GOCC_DEFAULTS, isQuotaName } from '@app/contracts';
import { CONTRACT_CONFIG_EXAMPLE } from '@app/contracts/config/contract-example.test-util';
import fc from 'fast-check';
import type { ImportFormat, ImportPlan } from './import-plan';
import { iso, NOW } from './import-test-helpers';
import { parseImport } from './parse-import';

const FORMATS: readonly ImportFormat[] = ['yaml', 'gocc'];
const BUILT_IN_NAMES = new Set(BUILT_IN_PROVIDERS.map((profile) => profile.name));

// -------------------------------------------------------------------------------------- checks

function checkPlan(plan: ImportPlan): void {
  expect(['native', 'go-ratelimit', 'gocc']).toContain(plan.source);
  for (const quota of plan.quotas) expect(isQuotaName(quota.name)).toBe(true);
  expect(new Set(plan.enableProviders).size).toBe(plan.enableProviders.length);
  for (const { provider } of plan.models) expect(BUILT_IN_NAMES.has(provider)).toBe(true);
  for (const { quota, key, cost } of plan.usage) {
    expect(quota).toBe(key);
    for (const amount of [cost.requests, cost.tokens]) {
      expect(Number.isSafeInteger(amount) && amount >= 0).toBe(true);
    }
    expect(cost.requests + cost.tokens).toBeGreaterThan(0);
  }
  for (const note of plan.notes) expect(note.length).toBeGreaterThan(0);
}

function checkRefusal(error: ConfigError, document: string): void {
  expect(error.source).toBe('document');
  expect(error.issues.length).toBeGreaterThan(0);
  // Unexpected failures (and a stack overflow the depth check missed) are wrapped as ConfigErrors
  // with these messages: none may happen.
  expect(error.message).not.toMatch(/could not be read|nested too deeply to be read/);
  const lineCount = document.split(/\r\n|\r|\n/).length;
  for (const issue of error.issues) {
    expect(issue.message.length).toBeGreaterThan(0);
    if (issue.line !== undefined) {
      expect(issue.line).toBeGreaterThanOrEqual(1);
      expect(issue.line).toBeLessThanOrEqual(lineCount + 1);
    }
  }
}

const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype);

/**
 * A plan or a ConfigError, for either format; anything else fails the property, and so does a
 * document that changes Object.prototype (a model named `__proto__` is data).
 */
function onlyPlanOrConfigError(document: string): void {
  try {
    planOrConfigError(document);
  } finally {
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(PROTOTYPE_NAMES);
  }
}

function planOrConfigError(document: string): void {
  for (const format of FORMATS) {
    let plan: ImportPlan;
    try {
      plan = parseImport(document, format, { gocc: GOCC_DEFAULTS, now: NOW });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      checkRefusal(error, document);
      continue;
    }
    checkPlan(plan);
  }
}

// ---------------------------------------------------------------------------------- generators

const YAML_PIECES = [
  ':',
  ': ',
  '- ',
  ' ',
  '  ',
  '\n',
  '\r\n',
  '\t',
  '[',
  ']',
  '{',
  '}',
  ',',
  '&a ',
  '*a',
  '!!timestamp ',
  '!!set ',
  '!!omap ',
  '!!binary ',
  '? ',
  '|',
  '>',
  '#',
  '"',
  "'",
  '---\n',
  '%YAML 1.1\n',
  '~',
  'null',
  '-1',
  '0',
  '1.5',
  '1e400',
  '9007199254740993',
  'quotas',
  'defaults',
  'providers',
  'keys',
  'state',
  'backend',
  'file_path',
  'requests',
  'tokens',
  'time',
  'count',
  'day_start',
  'day_count',
  'max_rpm',
  'max_tpm',
  'max_rpd',
  'key_pattern',
  'max_requests_per_window',
  'window_millis',
  'name',
  'limits',
  'limit',
  'window',
  'gemini',
  'gpt-4o',
  'default',
  '__proto__',
  'constructor',
  '2026-11-21T10:00:01Z',
  '2026-11-21T10:00:29.999999999+00:00',
  '2026-13-45T99:99:99Z',
];
const yamlish = fc
  .array(fc.constantFrom(...YAML_PIECES), { maxLength: 60 })
  .map((pieces) => pieces.join(''));

const VALID_DOCUMENTS: readonly string[] = [
  CONTRACT_CONFIG_EXAMPLE,
  `backend: yaml
providers: [gemini]
quotas:
  gemini-3-pro-preview: { max_rpm: 150, max_tpm: 1000000, max_rpd: 1000 }
  my-model: { max_rpm: 5, max_tpm: 0, max_rpd: 0 }
state:
  gemini-3-pro-preview:
    requests: [${iso(NOW - 1000)}, ${iso(NOW - 59_999)}, ${iso(NOW + 5)}]
    tokens: [{ time: ${iso(NOW - 1000)}, count: 1200 }]
    day_start: ${iso(NOW - 3_600_000)}
    day_count: 42
  my-model:
    requests:
      - ${iso(NOW - 2000)}
`,
  JSON.stringify(
    {
      keys: [
        {
          key_pattern: 'user-1',
          max_requests_per_window: 5,
          max_requests_in_queue: 10,
          window_millis: 1000,
        },
        { key_pattern: '^ip-[0-9]+$', key_pattern_is_regex: true },
      ],
    },
    null,
    2,
  ),
];

type Mutation = (text: string) => string;

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc
    .record({ at: fc.nat(), length: fc.nat({ max: 20 }) })
    .map(({ at, length }): Mutation => (text) => {
      const start = at % (text.length + 1);
      return text.slice(0, start) + text.slice(start + length);
    }),
  fc
    .record({ at: fc.nat(), piece: fc.oneof(fc.constantFrom(...YAML_PIECES), fc.string()) })
    .map(({ at, piece }): Mutation => (text) => {
      const start = at % (text.length + 1);
      return text.slice(0, start) + piece + text.slice(start);
    }),
  fc.record({ line: fc.nat(), other: fc.nat() }).map(({ line, other }): Mutation => (text) => {
    const lines = text.split('\n');
    const a = line % lines.length;
    const b = other % lines.length;
    [lines[a], lines[b]] = [lines[b] ?? '', lines[a] ?? ''];
    return lines.join('\n');
  }),
  fc.record({ line: fc.nat() }).map(({ line }): Mutation => (text) => {
    const lines = text.split('\n');
    lines.splice(line % lines.length, 0, lines[line % lines.length] ?? '');
    return lines.join('\n');
  }),
  fc
    .record({
      nth: fc.nat(),
      value: fc.constantFrom('-1', '0', '1.5', '1e400', '"7"', 'null', '[]', '{}', 'x y', '2^53'),
    })
    .map(({ nth, value }): Mutation => (text) => {
      const numbers = [...text.matchAll(/[0-9]+/g)];
      const match = numbers[nth % Math.max(numbers.length, 1)];
      if (match?.index === undefined) return text;
      return text.slice(0, match.index) + value + text.slice(match.index + match[0].length);
    }),
  fc.nat().map(
    (at): Mutation =>
      (text) =>
        text.slice(0, at % (text.length + 1)),
  ),
);

const mutatedDocument = fc
  .record({
    document: fc.constantFrom(...VALID_DOCUMENTS),
    mutations: fc.array(mutation, { minLength: 1, maxLength: 4 }),
  })
  .map(({ document, mutations }) => mutations.reduce((text, mutate) => mutate(text), document));

/** Objects shaped like the three formats, with any JSON in their fields. */
const anyJson = fc.jsonValue({ maxDepth: 3 });
const formatShaped = fc
  .record(
    {
      quotas: fc.oneof(
        anyJson,
        fc.dictionary(
          fc.constantFrom('gpt-4o', 'm', 'a b', 'default', '__proto__', 'constructor'),
          anyJson,
        ),
      ),
      defaults: anyJson,
      providers: fc.oneof(anyJson, fc.array(fc.constantFrom('gemini', 'x', 'Y', ''))),
      keys: fc.oneof(
        anyJson,
        fc.array(
          fc.record(
            {
              key_pattern: fc.oneof(fc.string({ maxLength: 10 }), anyJson),
              key_pattern_is_regex: fc.oneof(fc.boolean(), anyJson),
              max_requests_per_window: fc.oneof(fc.integer(), anyJson),
              window_millis: fc.oneof(fc.integer(), anyJson),
            },
            { requiredKeys: [] },
          ),
        ),
      ),
      state: fc.oneof(
        anyJson,
        fc.dictionary(
          fc.constantFrom('gpt-4o', 'm', 'x', '__proto__', 'constructor'),
          fc.record(
            {
              requests: fc.oneof(
                anyJson,
                fc.array(fc.integer({ min: -120_000, max: 120_000 }).map((ms) => iso(NOW + ms))),
              ),
              tokens: fc.oneof(anyJson, fc.array(fc.record({ time: anyJson, count: anyJson }))),
              day_start: anyJson,
              day_count: anyJson,
            },
            { requiredKeys: [] },
          ),
        ),
      ),
      backend: anyJson,
    },
    { requiredKeys: [] },
  )
  .map((value) => JSON.stringify(value));

// ---------------------------------------------------------------------------------- properties

describe('properties of importConfig: only a plan or a ConfigError, whatever the input', () => {
  it('arbitrary strings', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), onlyPlanOrConfigError), {
      numRuns: 1000,
    });
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), onlyPlanOrConfigError), {
      numRuns: 500,
    });
  });

  it('strings made of YAML syntax and the formats’ field names', () => {
    fc.assert(fc.property(yamlish, onlyPlanOrConfigError), { numRuns: 2000 });
  });

  it('arbitrary JSON', () => {
    fc.assert(fc.property(fc.json(), onlyPlanOrConfigError), { numRuns: 1000 });
  });

  it('JSON shaped like the three formats', () => {
    fc.assert(fc.property(formatShaped, onlyPlanOrConfigError), { numRuns: 500 });
  });

  it('mutated valid documents', () => {
    for (const document of VALID_DOCUMENTS) onlyPlanOrConfigError(document);
    fc.assert(fc.property(mutatedDocument, onlyPlanOrConfigError), { numRuns: 1000 });
  });

  it('documents nested deeper than the parser’s stack (refused before they are composed)', () => {
    const block = Array.from({ length: 2500 }, (_, depth) => `${' '.repeat(depth)}a:`).join('\n');
    const documents: [string, RegExp][] = [
      [
        '['.repeat(100_000),
        /^document: line 1: opens more than 1000 \[ or \{ without closing them$/,
      ],
      [
        '{a: '.repeat(50_000),
        /^document: line 1: opens more than 1000 \[ or \{ without closing them$/,
      ],
      ['['.repeat(500), /^document: line 1: nests collections more than 64 levels deep$/],
      ['- '.repeat(100_000), /^document: line 1: nests collections more than 64 levels deep$/],
      [block, /^document: line 65: nests collections more than 64 levels deep$/],
    ];
    for (const [document, message] of documents) {
      onlyPlanOrConfigError(document);
      for (const format of FORMATS) {
        expect(() => parseImport(document, format, { gocc: GOCC_DEFAULTS, now: NOW })).toThrow(
          message,
        );
      }
    }
    // 64 levels are still read.
    const deepest = `quotas: {}\nbackend: ${'['.repeat(63)}${']'.repeat(63)}\n`;
    expect(() => parseImport(deepest, 'yaml', { gocc: GOCC_DEFAULTS, now: NOW })).not.toThrow();
  });
});

describe('properties of go-ratelimit state', () => {
  it('carries exactly the requests and tokens of the minute before the import', () => {
    const entry = fc.record({
      ago: fc.integer({ min: -5000, max: 130_000 }),
      subMs: fc.boolean(),
      count: fc.nat({ max: 1_000_000 }),
    });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 30 }), (entries) => {
        // `.000001` below the millisecond puts an instant just after it, so 60 s + 1 ns old counts.
        const at = ({ ago, subMs }: { ago: number; subMs: boolean }) =>
          iso(NOW - ago).replace('Z', subMs ? '000001Z' : '000000Z');
        const inside = entries.filter(
          ({ ago, subMs }) => ago < 60_000 || (ago === 60_000 && subMs),
        );
        const requests = entries.map(at).join(', ');
        const tokens = entries.map((e) => `{ time: ${at(e)}, count: ${e.count} }`).join(', ');
        const document = `quotas:\n  m: {}\nstate:\n  m:\n    requests: [${requests}]\n    tokens: [${tokens}]\n`;
        const plan = parseImport(document, 'yaml', { gocc: GOCC_DEFAULTS, now: NOW });
        const expected = {
          requests: inside.length,
          tokens: inside.reduce((sum, e) => sum + e.count, 0),
        };
        const usage = expected.requests + expected.tokens === 0 ? [] : [expected];
        expect(plan.usage.map((u) => u.cost)).toEqual(usage);
      }),
      { numRuns: 500 },
    );
  });
});
