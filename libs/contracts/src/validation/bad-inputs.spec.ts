import { parseAcquireJson } from './parse-json';
import { parseAcquire } from './parse-acquire';
import { parseBatch } from './parse-batch';
import type { ParseResult } from './parse-result';
import { parseRelease } from './parse-release';
import { parseStats } from './parse-stats';
import { parseUsage } from './parse-usage';

/**
 * A corpus of bad inputs. Each must be refused, never throw, and give a reason that starts with
 * the field it names, which must be the field that is wrong.
 */
type Parser = (input: unknown) => ParseResult<unknown>;
type BadInput = readonly [label: string, parse: Parser, input: unknown, field: string];

const key = 'user-1';
const big = 'x'.repeat(300);

const corpus: readonly BadInput[] = [
  // the body as a whole
  ['null body', parseAcquire, null, 'body'],
  ['array body', parseAcquire, [{ key }], 'body'],
  ['string body', parseAcquire, 'user-1', 'body'],
  ['number body', parseAcquire, 42, 'body'],
  ['boolean body', parseAcquire, true, 'body'],
  ['undefined body', parseAcquire, undefined, 'body'],
  // key
  ['missing key', parseAcquire, { cost: 1 }, 'key'],
  ['null key', parseAcquire, { key: null }, 'key'],
  ['number key', parseAcquire, { key: 12 }, 'key'],
  ['array key', parseAcquire, { key: ['a'] }, 'key'],
  ['object key', parseAcquire, { key: { id: 1 } }, 'key'],
  ['empty key', parseAcquire, { key: '' }, 'key'],
  ['257-byte key', parseAcquire, { key: 'k'.repeat(257) }, 'key'],
  ['86 euro signs (258 bytes)', parseAcquire, { key: '€'.repeat(86) }, 'key'],
  ['NUL in key', parseAcquire, { key: 'a\u0000' }, 'key'],
  ['ESC in key', parseAcquire, { key: '\u001b[31m' }, 'key'],
  ['CR LF in key', parseAcquire, { key: 'a\r\nb' }, 'key'],
  ['DEL in key', parseAcquire, { key: 'a\u007f' }, 'key'],
  ['C1 in key', parseAcquire, { key: '\u0090' }, 'key'],
  ['lone surrogate key', parseAcquire, { key: '\ud800x' }, 'key'],
  // quota
  ['empty quota', parseAcquire, { key, quota: '' }, 'quota'],
  ['quota with slash', parseAcquire, { key, quota: 'a/b' }, 'quota'],
  ['quota with star', parseAcquire, { key, quota: 'api-*' }, 'quota'],
  ['129-char quota', parseAcquire, { key, quota: 'q'.repeat(129) }, 'quota'],
  ['number quota', parseAcquire, { key, quota: 5 }, 'quota'],
  ['null quota', parseAcquire, { key, quota: null }, 'quota'],
  ['unicode quota', parseAcquire, { key, quota: 'modèle' }, 'quota'],
  // cost
  ['negative cost', parseAcquire, { key, cost: -1 }, 'cost'],
  ['fractional cost', parseAcquire, { key, cost: 0.5 }, 'cost'],
  ['NaN cost', parseAcquire, { key, cost: Number.NaN }, 'cost'],
  ['Infinity cost', parseAcquire, { key, cost: Number.POSITIVE_INFINITY }, 'cost'],
  ['unsafe integer cost', parseAcquire, { key, cost: 2 ** 53 }, 'cost'],
  ['1e300 cost', parseAcquire, { key, cost: 1e300 }, 'cost'],
  ['string cost', parseAcquire, { key, cost: '1' }, 'cost'],
  ['null cost', parseAcquire, { key, cost: null }, 'cost'],
  ['boolean cost', parseAcquire, { key, cost: true }, 'cost'],
  ['array cost', parseAcquire, { key, cost: [1] }, 'cost'],
  ['negative tokens', parseAcquire, { key, cost: { tokens: -5 } }, 'cost.tokens'],
  ['fractional tokens', parseAcquire, { key, cost: { tokens: 2.5 } }, 'cost.tokens'],
  ['string tokens', parseAcquire, { key, cost: { tokens: '5' } }, 'cost.tokens'],
  ['null requests', parseAcquire, { key, cost: { requests: null } }, 'cost.requests'],
  ['uppercase unit', parseAcquire, { key, cost: { Tokens: 1 } }, 'cost.Tokens'],
  ['unit with a dash', parseAcquire, { key, cost: { 'input-tokens': 1 } }, 'cost["input-tokens"]'],
  ['unit starting with a digit', parseAcquire, { key, cost: { '1x': 1 } }, 'cost["1x"]'],
  ['empty unit', parseAcquire, { key, cost: { '': 1 } }, 'cost[""]'],
  [
    '65-char unit',
    parseAcquire,
    { key, cost: { ['u'.repeat(65)]: 1 } },
    `cost["${'u'.repeat(64)}…"]`,
  ],
  ['constructor unit', parseAcquire, { key, cost: { constructor: 1 } }, 'cost.constructor'],
  [
    '__proto__ unit',
    parseAcquire,
    JSON.parse('{"key":"k","cost":{"__proto__":1}}'),
    'cost.__proto__',
  ],
  [
    'too many units',
    parseAcquire,
    { key, cost: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`u${i}`, 1])) },
    'cost',
  ],
  // wait, maxWaitMs, requestId, deadline
  ['string wait', parseAcquire, { key, wait: 'true' }, 'wait'],
  ['number wait', parseAcquire, { key, wait: 1 }, 'wait'],
  ['negative maxWaitMs', parseAcquire, { key, maxWaitMs: -1 }, 'maxWaitMs'],
  ['fractional maxWaitMs', parseAcquire, { key, maxWaitMs: 1.5 }, 'maxWaitMs'],
  ['string maxWaitMs', parseAcquire, { key, maxWaitMs: '100' }, 'maxWaitMs'],
  ['empty requestId', parseAcquire, { key, requestId: '' }, 'requestId'],
  ['129-char requestId', parseAcquire, { key, requestId: 'r'.repeat(129) }, 'requestId'],
  ['non-ASCII requestId', parseAcquire, { key, requestId: 'ré' }, 'requestId'],
  ['requestId with newline', parseAcquire, { key, requestId: 'a\nb' }, 'requestId'],
  ['number requestId', parseAcquire, { key, requestId: 42 }, 'requestId'],
  ['zero deadline', parseAcquire, { key, deadline: 0 }, 'deadline'],
  ['negative deadline', parseAcquire, { key, deadline: -1000 }, 'deadline'],
  ['fractional deadline', parseAcquire, { key, deadline: 1763750000000.5 }, 'deadline'],
  ['ISO string deadline', parseAcquire, { key, deadline: '2025-11-21T00:00:00Z' }, 'deadline'],
  // batch
  ['batch without requests', parseBatch, {}, 'requests'],
  ['batch requests as object', parseBatch, { requests: {} }, 'requests'],
  [
    'batch of 1001',
    parseBatch,
    { requests: Array.from({ length: 1001 }, () => ({ key })) },
    'requests',
  ],
  ['batch as array', parseBatch, [{ key }], 'body'],
  // release, usage, stats
  ['release without key', parseRelease, { requestId: 'r' }, 'key'],
  ['release with empty leaseId', parseRelease, { key, leaseId: '' }, 'leaseId'],
  ['release with number requestId', parseRelease, { key, requestId: 1 }, 'requestId'],
  ['usage without cost', parseUsage, { key }, 'cost'],
  ['usage with negative tokens', parseUsage, { key, cost: { tokens: -1 } }, 'cost.tokens'],
  ['usage with long key', parseUsage, { key: big, cost: 1 }, 'key'],
  ['stats without key', parseStats, { quota: 'api' }, 'key'],
  ['stats with bad quota', parseStats, { key, quota: 'a b' }, 'quota'],
];

describe('bad inputs', () => {
  it('has a corpus of at least 60 inputs', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60);
  });

  it.each(corpus)('%s is refused at its field', (_label, parse, input, field) => {
    const result = parse(input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.field).toBe(field);
    expect(result.reason.startsWith(`${field}: `)).toBe(true);
    expect(result.reason.length).toBeGreaterThan(field.length + 2);
  });

  it('quotes odd unit names and cuts long ones short in the reason', () => {
    const result = parseAcquire({ key, cost: { ['Z'.repeat(5000)]: 1 } });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason.length).toBeLessThan(300);
    const control = parseAcquire({ key, cost: { 'a\nb': 1 } });
    expect(!control.ok && control.field).toBe('cost["a\\nb"]');
  });

  it('gives the same verdict through the JSON entry point', () => {
    for (const [, parse, input, field] of corpus) {
      if (parse !== parseAcquire || input === undefined) continue;
      const text = JSON.stringify(input);
      const result = parseAcquireJson(text);
      // NaN and Infinity become null in JSON, still refused at the same field.
      expect(result).toMatchObject({ ok: false, field });
    }
  });
});
