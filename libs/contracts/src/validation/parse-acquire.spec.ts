import { parseAcquire, parseDecide } from './parse-acquire';

describe('parseAcquire: valid requests', () => {
  it.each<[string, unknown, unknown]>([
    ['key only', { key: 'user-1' }, { key: 'user-1', cost: { requests: 1 } }],
    [
      'the example of the contract',
      {
        key: 'user-1',
        quota: 'api',
        cost: 1,
        wait: false,
        maxWaitMs: 5000,
        requestId: 'c0ffee',
        deadline: 1763750000000,
      },
      {
        key: 'user-1',
        quota: 'api',
        cost: { requests: 1 },
        wait: false,
        maxWaitMs: 5000,
        requestId: 'c0ffee',
        deadline: 1763750000000,
      },
    ],
    ['a number cost is requests', { key: 'k', cost: 7 }, { key: 'k', cost: { requests: 7 } }],
    ['a zero cost', { key: 'k', cost: 0 }, { key: 'k', cost: { requests: 0 } }],
    [
      'requests defaults to 1 in a cost object',
      { key: 'k', cost: { tokens: 1500 } },
      { key: 'k', cost: { requests: 1, tokens: 1500 } },
    ],
    [
      'an explicit requests wins',
      { key: 'k', cost: { requests: 0, tokens: 5 } },
      { key: 'k', cost: { requests: 0, tokens: 5 } },
    ],
    ['an empty cost object', { key: 'k', cost: {} }, { key: 'k', cost: { requests: 1 } }],
    [
      'custom lowercase units',
      { key: 'k', cost: { images_hd: 2, gpu2: 1 } },
      { key: 'k', cost: { requests: 1, images_hd: 2, gpu2: 1 } },
    ],
    [
      'the largest safe integer',
      { key: 'k', cost: Number.MAX_SAFE_INTEGER },
      { key: 'k', cost: { requests: Number.MAX_SAFE_INTEGER } },
    ],
    [
      'unknown fields are ignored and dropped',
      { key: 'k', priority: 'high', cost: 2 },
      { key: 'k', cost: { requests: 2 } },
    ],
    ['maxWaitMs 0', { key: 'k', maxWaitMs: 0 }, { key: 'k', maxWaitMs: 0, cost: { requests: 1 } }],
    ['wait true', { key: 'k', wait: true }, { key: 'k', wait: true, cost: { requests: 1 } }],
    [
      'a requestId with spaces and punctuation',
      { key: 'k', requestId: 'req 42/#~' },
      { key: 'k', requestId: 'req 42/#~', cost: { requests: 1 } },
    ],
    [
      'a key of 256 ASCII bytes',
      { key: 'k'.repeat(256) },
      { key: 'k'.repeat(256), cost: { requests: 1 } },
    ],
    [
      'a key of 256 UTF-8 bytes (128 two-byte letters)',
      { key: 'é'.repeat(128) },
      { key: 'é'.repeat(128), cost: { requests: 1 } },
    ],
    [
      'a key of emoji (surrogate pairs)',
      { key: '🚀user' },
      { key: '🚀user', cost: { requests: 1 } },
    ],
    [
      'a decomposed key is normalised to NFC',
      { key: 'cafe\u0301' },
      { key: 'caf\u00e9', cost: { requests: 1 } },
    ],
  ])('%s', (_name, input, expected) => {
    expect(parseAcquire(input)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['gemini-2.5-pro', 'gemini-2.5-pro'],
    ['claude-haiku-3.5', 'claude-haiku-3.5'],
    ['gpt-4o', 'gpt-4o'],
    ['tenant:team.api_v2', 'tenant:team.api_v2'],
    ['128 characters', 'q'.repeat(128)],
  ])('accepts the quota name %s', (_label, quota) => {
    const result = parseAcquire({ key: 'k', quota });
    expect(result.ok && result.value.quota).toBe(quota);
  });

  it('does not share or alias the caller cost object', () => {
    const cost = { tokens: 3 };
    const result = parseAcquire({ key: 'k', cost });
    expect(result.ok && result.value.cost).not.toBe(cost);
    expect(cost).toEqual({ tokens: 3 });
  });

  it('returns the default cost frozen, so a shared object cannot be changed', () => {
    const result = parseAcquire({ key: 'k' });
    expect(result.ok && Object.isFrozen(result.value.cost)).toBe(true);
  });

  it('decide parses exactly like acquire', () => {
    expect(parseDecide).toBe(parseAcquire);
  });
});

describe('parseAcquire: the reason names the field', () => {
  it.each<[string, unknown, string, string]>([
    ['missing key', {}, 'key', 'key: is required and must be a string of 1..256 bytes of UTF-8'],
    ['empty key', { key: '' }, 'key', 'key: must be 1..256 bytes of UTF-8'],
    ['257-byte key', { key: 'k'.repeat(257) }, 'key', 'key: must be 1..256 bytes of UTF-8'],
    [
      'key of 129 two-byte letters',
      { key: 'é'.repeat(129) },
      'key',
      'key: must be 1..256 bytes of UTF-8',
    ],
    [
      'key with a newline',
      { key: 'a\nb' },
      'key',
      'key: must not contain control characters (C0, DEL, C1)',
    ],
    ['negative number cost', { key: 'k', cost: -1 }, 'cost', 'cost: must be an integer >= 0'],
    ['fractional cost', { key: 'k', cost: 1.5 }, 'cost', 'cost: must be an integer >= 0'],
    [
      'negative tokens',
      { key: 'k', cost: { tokens: -3 } },
      'cost.tokens',
      'cost.tokens: must be an integer >= 0',
    ],
    [
      'string cost',
      { key: 'k', cost: '3' },
      'cost',
      'cost: must be an integer >= 0 or an object of unit -> integer >= 0',
    ],
    [
      'uppercase unit',
      { key: 'k', cost: { Tokens: 3 } },
      'cost.Tokens',
      'cost.Tokens: is not a unit: units are lowercase words [a-z][a-z0-9_]* of at most 64 characters',
    ],
    [
      'quota with a space',
      { key: 'k', quota: 'my api' },
      'quota',
      'quota: must be 1..128 characters of [A-Za-z0-9._:-]',
    ],
    ['string wait', { key: 'k', wait: 'yes' }, 'wait', 'wait: must be true or false'],
    [
      'deadline zero',
      { key: 'k', deadline: 0 },
      'deadline',
      'deadline: must be an integer >= 1 (epoch milliseconds)',
    ],
    [
      'requestId too long',
      { key: 'k', requestId: 'r'.repeat(129) },
      'requestId',
      'requestId: must be 1..128 characters of printable ASCII',
    ],
  ])('%s', (_name, input, field, reason) => {
    expect(parseAcquire(input)).toEqual({ ok: false, field, reason });
  });
});
