import fc from 'fast-check';
import { CONTROL_CHARACTER } from '../messages/control-characters';
import { normaliseKey } from './key';
import { parseAcquire } from './parse-acquire';
import { parseBatch } from './parse-batch';
import { parseAcquireJson } from './parse-json';
import type { ParseResult } from './parse-result';
import { parseRelease } from './parse-release';
import { parseStats } from './parse-stats';
import { parseUsage } from './parse-usage';

const RUNS = 5000;
const parsers: readonly [string, (input: unknown) => ParseResult<unknown>][] = [
  ['acquire', parseAcquire],
  ['batch', parseBatch],
  ['release', parseRelease],
  ['usage', parseUsage],
  ['stats', parseStats],
];

/** Either a value, or a reason that starts with the (non-empty) field it names. */
function isWellFormedResult(result: ParseResult<unknown>): boolean {
  if (result.ok) return true;
  return result.field.length > 0 && result.reason.startsWith(`${result.field}: `);
}

/** Values that look like requests often enough to reach the deeper rules. */
const requestLike = fc.record(
  {
    key: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.jsonValue()),
    quota: fc.oneof(fc.constantFrom('api', 'gpt-4o', 'a b', ''), fc.jsonValue()),
    cost: fc.oneof(
      fc.integer({ min: -5, max: 1e6 }),
      fc.double(),
      fc.dictionary(
        fc.string({ maxLength: 8 }),
        fc.oneof(fc.integer(), fc.double(), fc.jsonValue()),
      ),
      fc.jsonValue(),
    ),
    wait: fc.oneof(fc.boolean(), fc.jsonValue()),
    maxWaitMs: fc.oneof(fc.integer(), fc.jsonValue()),
    requestId: fc.oneof(fc.string({ maxLength: 140 }), fc.jsonValue()),
    deadline: fc.oneof(fc.integer({ min: -1, max: 2e12 }), fc.jsonValue()),
    leaseId: fc.string({ maxLength: 10 }),
  },
  { requiredKeys: [] },
);

describe('properties of the validators', () => {
  it.each(parsers)('%s never throws on any JSON value and names a field', (_name, parse) => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => isWellFormedResult(parse(value))),
      { numRuns: RUNS },
    );
  });

  it.each(parsers)('%s never throws on request-like objects and names a field', (_name, parse) => {
    fc.assert(
      fc.property(requestLike, (value) => isWellFormedResult(parse(value))),
      { numRuns: RUNS },
    );
  });

  it('acquire never throws on arbitrary JavaScript values', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withBoxedValues: true }), (value) =>
        isWellFormedResult(parseAcquire(value)),
      ),
      { numRuns: RUNS },
    );
  });

  it('acquire never throws on arbitrary text and names the body when it is not JSON', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        const result = parseAcquireJson(text);
        if (!isWellFormedResult(result)) return false;
        let isJson = true;
        try {
          JSON.parse(text);
        } catch {
          isJson = false;
        }
        return isJson || (!result.ok && result.field === 'body');
      }),
      { numRuns: RUNS },
    );
  });

  it('a bad value in one field is reported at that field', () => {
    const fields = ['quota', 'cost', 'wait', 'maxWaitMs', 'requestId', 'deadline'] as const;
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.jsonValue(), (field, value) => {
        const result = parseAcquire({ key: 'user-1', [field]: value });
        if (result.ok) return true;
        const nested = result.field.slice(field.length);
        return (
          result.field.startsWith(field) &&
          (nested === '' || nested.startsWith('.') || nested.startsWith('['))
        );
      }),
      { numRuns: RUNS },
    );
  });

  it('accepted keys are NFC, 1..256 bytes, not blank, without control characters, and stable', () => {
    const keys = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.string({ maxLength: 300 }),
    );
    fc.assert(
      fc.property(keys, (raw) => {
        const result = normaliseKey(raw);
        if (!result.ok) return result.field === 'key';
        const key = result.value;
        const bytes = Buffer.byteLength(key, 'utf8');
        const again = normaliseKey(key);
        return (
          key === key.normalize('NFC') &&
          bytes >= 1 &&
          bytes <= 256 &&
          key.trim() !== '' &&
          !CONTROL_CHARACTER.test(key) &&
          again.ok &&
          again.value === key
        );
      }),
      { numRuns: RUNS },
    );
  });

  it('valid requests parse, and parsing the normalised result is a fixed point', () => {
    const unit = fc
      .stringMatching(/^[a-z][a-z0-9_]{0,10}$/)
      .filter((name) => name !== 'constructor');
    const count = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
    const validRequest = fc.record(
      {
        key: fc
          .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 256 })
          .filter((key) => key.trim() !== ''),
        quota: fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/),
        cost: fc.oneof(count, fc.dictionary(unit, count, { maxKeys: 10 })),
        wait: fc.boolean(),
        maxWaitMs: count,
        requestId: fc.stringMatching(/^[\x20-\x7e]{1,128}$/),
        deadline: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      },
      { requiredKeys: ['key'] },
    );
    fc.assert(
      fc.property(validRequest, (request) => {
        const first = parseAcquire(JSON.parse(JSON.stringify(request)));
        if (!first.ok) return false;
        const { cost } = first.value;
        const expectedRequests =
          typeof request.cost === 'number' ? request.cost : (request.cost?.requests ?? 1);
        const second = parseAcquire(JSON.parse(JSON.stringify(first.value)));
        return (
          cost.requests === expectedRequests &&
          second.ok &&
          JSON.stringify(second.value) === JSON.stringify(first.value)
        );
      }),
      { numRuns: RUNS },
    );
  });
});
