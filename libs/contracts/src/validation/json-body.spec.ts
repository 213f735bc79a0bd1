import { parseJsonBody } from './json-body';
import {
  parseAcquireJson,
  parseBatchJson,
  parseReleaseJson,
  parseStatsJson,
  parseUsageJson,
} from './parse-json';

describe('JSON bodies', () => {
  it('parses a Buffer and a string alike', () => {
    const text = '{"key":"user-1","cost":{"tokens":5}}';
    const expected = { ok: true, value: { key: 'user-1', cost: { requests: 1, tokens: 5 } } };
    expect(parseAcquireJson(Buffer.from(text))).toEqual(expected);
    expect(parseAcquireJson(text)).toEqual(expected);
    expect(parseAcquireJson(new TextEncoder().encode(text))).toEqual(expected);
  });

  it('skips a UTF-8 byte order mark', () => {
    expect(parseAcquireJson('\ufeff{"key":"k"}')).toMatchObject({ ok: true });
  });

  it.each<[string, RegExp]>([
    ['', /^body: is empty/],
    ['   \n', /^body: is empty/],
    ['{"key":', /^body: is not valid JSON \(/],
    ["{'key':'k'}", /^body: is not valid JSON/],
    ['{"key":"k"} trailing', /^body: is not valid JSON/],
    ['NaN', /^body: is not valid JSON/],
  ])('names the body for %j', (text, reason) => {
    const result = parseJsonBody(text);
    expect(result).toMatchObject({
      ok: false,
      field: 'body',
      reason: expect.stringMatching(reason),
    });
  });

  it('reports a non-object JSON value against the body', () => {
    expect(parseAcquireJson('42')).toEqual({
      ok: false,
      field: 'body',
      reason: 'body: must be a JSON object',
    });
  });

  it('keeps __proto__ in JSON an own, refused property, never a prototype', () => {
    const result = parseAcquireJson('{"key":"k","cost":{"__proto__":{"polluted":1}}}');
    expect(result).toMatchObject({ ok: false, field: 'cost.__proto__' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('turns invalid UTF-8 into U+FFFD rather than failing the parse', () => {
    const bytes = Buffer.concat([Buffer.from('{"key":"a'), Buffer.from([0xff]), Buffer.from('"}')]);
    expect(parseAcquireJson(bytes)).toEqual({
      ok: true,
      value: { key: 'a\ufffd', cost: { requests: 1 } },
    });
  });

  it('offers a JSON variant of every message', () => {
    expect(parseBatchJson('{"requests":[{"key":"a"}]}')).toMatchObject({ ok: true });
    expect(parseReleaseJson('{"key":"a","requestId":"r"}')).toMatchObject({ ok: true });
    expect(parseUsageJson('{"key":"a","cost":{"tokens":1}}')).toMatchObject({ ok: true });
    expect(parseStatsJson('{"key":"a"}')).toMatchObject({ ok: true });
    expect(parseStatsJson('{')).toMatchObject({ ok: false, field: 'body' });
  });
});
