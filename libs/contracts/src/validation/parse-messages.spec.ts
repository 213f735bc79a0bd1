import { parseRelease } from './parse-release';
import { parseStats } from './parse-stats';
import { parseUsage } from './parse-usage';

describe('parseRelease', () => {
  it.each<[string, unknown, unknown]>([
    ['key only', { key: 'k' }, { key: 'k' }],
    [
      'every field',
      { key: 'k', quota: 'api', requestId: 'r-1', leaseId: 'l-1', extra: true },
      { key: 'k', quota: 'api', requestId: 'r-1', leaseId: 'l-1' },
    ],
    ['an NFC key', { key: 'A\u030a' }, { key: '\u00c5' }],
  ])('accepts %s', (_name, input, value) => {
    expect(parseRelease(input)).toEqual({ ok: true, value });
  });

  it.each<[unknown, string]>([
    [{ requestId: 'r' }, 'key'],
    [{ key: 'k', leaseId: '' }, 'leaseId'],
    [{ key: 'k', requestId: 7 }, 'requestId'],
    [{ key: 'k', quota: '' }, 'quota'],
    ['k', 'body'],
  ])('refuses %j at %s', (input, field) => {
    const result = parseRelease(input);
    expect(result).toMatchObject({ ok: false, field });
    expect(!result.ok && result.reason.startsWith(`${field}: `)).toBe(true);
  });
});

describe('parseUsage', () => {
  it.each<[string, unknown, unknown]>([
    [
      'settling an admitted request',
      { key: 'k', requestId: 'r-1', cost: { tokens: 1234 } },
      { key: 'k', requestId: 'r-1', cost: { requests: 1, tokens: 1234 } },
    ],
    [
      'recording tokens only',
      { key: 'k', quota: 'gpt-4o', cost: { requests: 0, tokens: 10 } },
      { key: 'k', quota: 'gpt-4o', cost: { requests: 0, tokens: 10 } },
    ],
    ['a number cost', { key: 'k', cost: 3 }, { key: 'k', cost: { requests: 3 } }],
  ])('accepts %s', (_name, input, value) => {
    expect(parseUsage(input)).toEqual({ ok: true, value });
  });

  it.each<[unknown, string]>([
    [{ key: 'k' }, 'cost'],
    [{ key: 'k', cost: { tokens: 1.25 } }, 'cost.tokens'],
    [{ key: 'k', cost: null }, 'cost'],
    [{ cost: 1 }, 'key'],
  ])('refuses %j at %s', (input, field) => {
    expect(parseUsage(input)).toMatchObject({ ok: false, field });
  });

  it('says a missing cost is required', () => {
    expect(parseUsage({ key: 'k' })).toMatchObject({
      reason: expect.stringMatching(/^cost: is required/),
    });
  });
});

describe('parseStats', () => {
  it.each<[unknown, unknown]>([
    [{ key: 'k' }, { key: 'k' }],
    [
      { key: 'k', quota: 'api', cost: 9 },
      { key: 'k', quota: 'api' },
    ],
  ])('accepts %j', (input, value) => {
    expect(parseStats(input)).toEqual({ ok: true, value });
  });

  it.each<[unknown, string]>([
    [{}, 'key'],
    [{ key: 'k', quota: 'no spaces allowed' }, 'quota'],
    [[{ key: 'k' }], 'body'],
  ])('refuses %j at %s', (input, field) => {
    expect(parseStats(input)).toMatchObject({ ok: false, field });
  });
});
