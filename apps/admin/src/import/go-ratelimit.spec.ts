import { modelQuota } from '@app/contracts';
import { iso, NOW, plan, refusal, where } from './import-test-helpers';

const ROLLING_DAY_NOTE =
  "go-ratelimit counts requests per day over a rolling 24 h from day_start; here a model's rpd (max_rpd) resets at midnight America/Los_Angeles, as the providers reset it, so a day's budget frees up at a different time than it did in go-ratelimit.";

/** A state document for one model with these request instants (ms before NOW). */
function requestsAgo(model: string, ...ago: number[]): string {
  const instants = ago.map((ms) => iso(NOW - ms)).join(', ');
  return `quotas:\n  ${model}: { max_rpm: 10 }\nstate:\n  ${model}:\n    requests: [${instants}]\n`;
}

describe('importConfig, format yaml: go-ratelimit’s ratelimits.yaml', () => {
  it('imports the documented example', () => {
    const document = `backend: yaml
file_path: /home/me/.core/ratelimits.yaml
providers: [gemini, openai]
quotas:
  gemini-3-pro-preview: { max_rpm: 150, max_tpm: 1000000, max_rpd: 1000 }
  my-local-llama: { max_rpm: 30, max_tpm: 0, max_rpd: 0 }
state:
  gemini-3-pro-preview:
    requests: [2026-11-21T10:00:01Z, 2026-11-21T10:00:02Z, 2026-11-21T09:59:00Z]
    tokens: [{ time: 2026-11-21T10:00:01Z, count: 1200 }, { time: 2026-11-21T10:00:02Z, count: 800 }]
    day_start: 2026-11-21T00:00:00Z
    day_count: 42
`;
    expect(plan(document)).toEqual({
      source: 'go-ratelimit',
      quotas: [modelQuota({ model: 'my-local-llama', maxRpm: 30, maxTpm: 0, maxRpd: 0 })],
      enableProviders: ['gemini', 'openai'],
      models: [
        {
          provider: 'gemini',
          model: { model: 'gemini-3-pro-preview', maxRpm: 150, maxTpm: 1_000_000, maxRpd: 1000 },
        },
      ],
      usage: [
        {
          quota: 'gemini-3-pro-preview',
          key: 'gemini-3-pro-preview',
          cost: { requests: 2, tokens: 2000 },
        },
      ],
      notes: [
        "`backend`, `file_path`: go-ratelimit's storage settings were ignored.",
        "gemini-3-pro-preview: go-ratelimit counted 42 requests in its day (since 2026-11-21T00:00:00.000Z); only the 2 requests of the last minute were carried over, so 40 of the day's requests are not charged to rpd here (recording them would also charge rpm, which counts the same requests).",
        ROLLING_DAY_NOTE,
      ],
    });
  });

  it('reads a file go-ratelimit persisted (yaml.v3: 4-space indent, nanoseconds, offsets)', () => {
    const document = `quotas:
    gemini-2.0-flash:
        max_rpm: 150
        max_tpm: 1000000
        max_rpd: 0
    gemini-2.0-flash-lite:
        max_rpm: 0
        max_tpm: 0
        max_rpd: 0
state:
    gemini-2.0-flash:
        requests:
            - 2026-11-21T11:00:01.123456789+01:00
            - 2026-11-21T10:59:30.000000001+01:00
        tokens:
            - time: 2026-11-21T11:00:01.123456789+01:00
              count: 1200
        day_start: 2026-11-21T10:59:00.5+01:00
        day_count: 2
`;
    const result = plan(document);
    expect(result.models.map((m) => `${m.provider}/${m.model.model}`)).toEqual([
      'gemini/gemini-2.0-flash',
      'gemini/gemini-2.0-flash-lite',
    ]);
    expect(result.enableProviders).toEqual(['gemini']);
    // 10:59:30.000000001+01:00 is 59.999999999 s before NOW: inside the minute.
    expect(result.usage).toEqual([
      { quota: 'gemini-2.0-flash', key: 'gemini-2.0-flash', cost: { requests: 2, tokens: 1200 } },
    ]);
    expect(result.notes).toEqual([
      'Provider gemini is enabled because the document sets limits for its models gemini-2.0-flash, gemini-2.0-flash-lite (go-ratelimit enforces every quota in its file); its 3 other models get the built-in limits.',
      ROLLING_DAY_NOTE,
    ]);
  });

  it.each<[string, number[], number]>([
    ['59.999 s ago is within the minute', [59_999], 1],
    ['60 s ago is not', [60_000], 0],
    ['60.001 s ago is not', [60_001], 0],
    ['now is', [0], 1],
    ['a mix', [0, 1, 30_000, 59_999, 60_000, 120_000, 86_400_000], 4],
  ])('requests: %s', (_, ago, requests) => {
    const result = plan(requestsAgo('m', ...ago));
    expect(result.usage).toEqual(
      requests === 0 ? [] : [{ quota: 'm', key: 'm', cost: { requests, tokens: 0 } }],
    );
  });

  it.each<[string, number, boolean]>([
    ['59.999 s ago', 59_999, true],
    ['60 s ago', 60_000, false],
  ])('tokens: an entry %s counts: %s', (_, ago, counted) => {
    const document = `quotas:\n  m: {}\nstate:\n  m:\n    tokens:\n      - { time: ${iso(NOW - ago)}, count: 700 }\n      - { time: ${iso(NOW - 120_000)}, count: 5 }\n`;
    expect(plan(document).usage).toEqual(
      counted ? [{ quota: 'm', key: 'm', cost: { requests: 0, tokens: 700 } }] : [],
    );
  });

  it('counts instants in the future as now, and says so', () => {
    const document = `quotas:\n  m: {}\nstate:\n  m:\n    requests: [${iso(NOW + 1)}, ${iso(NOW + 3_600_000)}, ${iso(NOW - 10)}]\n    tokens: [{ time: ${iso(NOW + 5)}, count: 9 }]\n`;
    const result = plan(document);
    expect(result.usage).toEqual([{ quota: 'm', key: 'm', cost: { requests: 3, tokens: 9 } }]);
    expect(result.notes).toEqual([
      'm: 2 request times and 1 token entry are later than the time of the import (is a clock ahead?); counted as made at the import.',
    ]);
  });

  it.each<[string, number, number, string | undefined]>([
    [
      'day_start 23:59:59.999 ago: the day still counts',
      86_399_999,
      5,
      "m: go-ratelimit counted 5 requests in its day (since 2026-11-20T10:00:30.001Z); only the 1 request of the last minute was carried over, so 4 of the day's requests are not charged to rpd here (recording them would also charge rpm, which counts the same requests).",
    ],
    ['day_start 24 h ago: go-ratelimit would have reset it', 86_400_000, 5, undefined],
    ['a day count the minute covers', 3_600_000, 1, undefined],
    [
      'day_start in the future',
      -1000,
      3,
      "m: go-ratelimit counted 3 requests in its day (today); only the 1 request of the last minute was carried over, so 2 of the day's requests are not charged to rpd here (recording them would also charge rpm, which counts the same requests).",
    ],
  ])('day_count: %s', (_, ago, dayCount, note) => {
    const document = `quotas:\n  m: { max_rpm: 10 }\nstate:\n  m:\n    requests: [${iso(NOW - 1000)}]\n    day_start: ${iso(NOW - ago)}\n    day_count: ${dayCount}\n`;
    const notes = plan(document).notes.filter((text) => text.includes('in its day'));
    expect(notes).toEqual(note === undefined ? [] : [note]);
  });

  it('says nothing of the rolling day when no model has a daily limit or a day count', () => {
    expect(plan(requestsAgo('m', 1000)).notes).toEqual([]);
  });

  it('skips state with no usage in the last minute, and null sections', () => {
    const document = `quotas:\n  m: {}\nstate:\n  m:\n    requests: [${iso(NOW - 61_000)}]\n    tokens: []\n  n:\n  o: { requests: null, tokens: null }\nproviders:\n`;
    expect(plan(document)).toEqual({
      source: 'go-ratelimit',
      quotas: [modelQuota({ model: 'm', maxRpm: 0, maxTpm: 0, maxRpd: 0 })],
      enableProviders: [],
      models: [],
      usage: [],
      notes: [],
    });
  });

  it('carries usage of a built-in model whose provider the document enables', () => {
    const document = `providers: [anthropic]\nstate:\n  claude-opus-4:\n    requests: [${iso(NOW - 5)}]\n`;
    expect(plan(document).usage).toEqual([
      { quota: 'claude-opus-4', key: 'claude-opus-4', cost: { requests: 1, tokens: 0 } },
    ]);
  });

  it('skips the usage of models no quota will serve, and says so', () => {
    const document = `providers: [anthropic]\nstate:\n  gpt-4o:\n    requests: [${iso(NOW - 5)}]\n  mystery:\n    requests: [${iso(NOW - 5)}]\n`;
    const result = plan(document);
    expect(result.usage).toEqual([]);
    expect(result.notes).toEqual([
      'The recent usage of gpt-4o, mystery was not carried over: the document sets no quota for those models and they are not in an enabled provider (go-ratelimit does not limit them either).',
    ]);
  });

  it('enables a provider without a built-in profile, and says so', () => {
    const result = plan('providers: [mistral, gemini, mistral]\nstate: {}\n');
    expect(result.enableProviders).toEqual(['mistral', 'gemini']);
    expect(result.notes).toEqual([
      'Provider mistral has no built-in profile (go-ratelimit ignores it too); it is enabled without models.',
    ]);
  });

  it('takes model names that are also names of JS object properties', () => {
    const document = `quotas:\n  constructor: { max_rpm: 1 }\n  toString: { max_rpm: 2 }\nstate:\n  constructor:\n    requests: [${iso(NOW - 5)}]\n`;
    const result = plan(document);
    expect(result.quotas.map((quota) => quota.name)).toEqual(['constructor', 'toString']);
    expect(result.usage).toEqual([
      { quota: 'constructor', key: 'constructor', cost: { requests: 1, tokens: 0 } },
    ]);
  });

  it.each([
    ['quotas as a mapping', 'quotas: {}\n'],
    ['state', 'state: {}\n'],
    ['backend', 'backend: sqlite\n'],
    ['file_path', 'file_path: /tmp/x.yaml\n'],
    ['sqlite_path', 'sqlite_path: /tmp/x.db\n'],
  ])('is recognised by %s', (_, document) => {
    expect(plan(document).source).toBe('go-ratelimit');
  });

  it('takes YAML timestamps that arrive as Dates (!!timestamp, %YAML 1.1)', () => {
    const tagged = `quotas:\n  m: {}\nstate:\n  m:\n    requests: [!!timestamp ${iso(NOW - 5)}]\n`;
    const yaml11 = `%YAML 1.1\n---\nquotas:\n  m: {}\nstate:\n  m:\n    requests: [${iso(NOW - 5)}, 2026-11-21 10:00:29]\n`;
    expect(plan(tagged).usage).toEqual([
      { quota: 'm', key: 'm', cost: { requests: 1, tokens: 0 } },
    ]);
    expect(plan(yaml11).usage).toEqual([
      { quota: 'm', key: 'm', cost: { requests: 2, tokens: 0 } },
    ]);
  });
});

describe('go-ratelimit documents are refused with line and field', () => {
  it.each<[string, string, string[], RegExp]>([
    [
      'a negative max_rpm',
      'quotas:\n  m:\n    max_rpm: -1\n',
      ['3 quotas.m.max_rpm'],
      /must be an integer >= 0/,
    ],
    ['a fractional max_tpm', 'quotas:\n  m: { max_tpm: 1.5 }\n', ['2 quotas.m.max_tpm'], /integer/],
    ['a string max_rpd', 'quotas:\n  m:\n    max_rpd: "10"\n', ['3 quotas.m.max_rpd'], /integer/],
    [
      'an unknown quota field',
      'quotas:\n  gpt-4o:\n    max_rpm: 1\n    max_rmp: 2\n',
      ['4 quotas["gpt-4o"].max_rmp'],
      /not a known field \(expected one of: max_rpm, max_tpm, max_rpd\)/,
    ],
    [
      'a model name that cannot name a quota',
      'quotas:\n  ok: {}\n  "bad name": {}\n',
      ['3 quotas["bad name"]'],
      /not a usable model name.*\[A-Za-z0-9._:-\]/,
    ],
    ['a model named default', 'quotas:\n  default: {}\n', ['2 quotas.default'], /default quota/],
    [
      'a quota that is not a mapping',
      'quotas:\n  m: 5\n',
      ['2 quotas.m'],
      /must be a mapping \(max_rpm, max_tpm, max_rpd/,
    ],
    [
      'quotas as a list next to state',
      'quotas:\n  - name: a\nstate: {}\n',
      ['1 quotas'],
      /mapping of model names.*read as go-ratelimit's ratelimits\.yaml because it has `state:`/,
    ],
    [
      'an unknown top-level field',
      'quotas: {}\ndefaults: { shadow: true }\n',
      ['2 defaults'],
      /not a known field \(the document is read as go-ratelimit's ratelimits\.yaml because `quotas` is a mapping of model names; expected one of: backend, file_path, sqlite_path, providers, quotas, state\)/,
    ],
    ['providers not a list', 'state: {}\nproviders: gemini\n', ['2 providers'], /list/],
    ['a bad provider name', 'state: {}\nproviders: [Gemini]\n', ['2 providers[0]'], /lowercase/],
    [
      'a request time that is not a timestamp',
      'state:\n  m:\n    requests:\n      - 2026-11-21T10:00:01Z\n      - yesterday\n',
      ['5 state.m.requests[1]'],
      /must be a timestamp/,
    ],
    ['requests not a list', 'state:\n  m:\n    requests: 3\n', ['3 state.m.requests'], /list/],
    [
      'a token entry without count',
      'state:\n  m:\n    tokens:\n      - time: 2026-11-21T10:00:01Z\n',
      ['4 state.m.tokens[0].count'],
      /is required/,
    ],
    [
      'a token entry with an unknown field',
      'state:\n  m:\n    tokens:\n      - { time: 2026-11-21T10:00:01Z, count: 1, model: m }\n',
      ['4 state.m.tokens[0].model'],
      /not a known field/,
    ],
    [
      'a negative day_count',
      'state:\n  m:\n    day_count: -2\n',
      ['3 state.m.day_count'],
      /integer >= 0/,
    ],
    [
      'a day_start that is not a timestamp',
      'state:\n  m:\n    day_start: 12\n',
      ['3 state.m.day_start'],
      /must be a timestamp/,
    ],
    [
      'an unknown state field',
      'state:\n  m:\n    day_cnt: 2\n',
      ['3 state.m.day_cnt'],
      /expected one of: requests, tokens, day_start, day_count/,
    ],
    [
      'tokens that add up beyond 2^53',
      `quotas:\n  m: {}\nstate:\n  m:\n    tokens:\n      - { time: ${iso(NOW)}, count: 9007199254740991 }\n      - { time: ${iso(NOW)}, count: 1 }\n`,
      ['5 state.m.tokens'],
      /add up to more than 2\^53 - 1/,
    ],
  ])('%s', (_, document, expected, message) => {
    const error = refusal(document);
    expect(error.source).toBe('document');
    expect(where(error)).toEqual(expected);
    expect(error.message).toMatch(message);
  });

  it('lists every problem in file order', () => {
    const error = refusal(
      'state:\n  m:\n    requests: [x]\nquotas:\n  m: { max_rpm: -1 }\nbackend: yaml\nextra: 1\n',
    );
    expect(where(error)).toEqual(['3 state.m.requests[0]', '5 quotas.m.max_rpm', '7 extra']);
  });
});
