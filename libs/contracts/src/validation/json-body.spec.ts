import { MAX_JSON_CONTAINERS, MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from '../messages/limits';
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

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

describe('the shape of a JSON body, checked before parsing', () => {
  it(`takes ${MAX_JSON_DEPTH} levels and refuses one more, naming the body`, () => {
    expect(parseJsonBody(nested(MAX_JSON_DEPTH))).toMatchObject({ ok: true });
    expect(parseJsonBody(nested(MAX_JSON_DEPTH + 1))).toEqual({
      ok: false,
      field: 'body',
      reason: `body: is nested more than ${MAX_JSON_DEPTH} levels deep`,
    });
  });

  it('refuses 1 MiB of nested arrays, as bytes too', () => {
    const half = 512 * 1024;
    expect(parseAcquireJson(Buffer.from(nested(half)))).toMatchObject({ ok: false, field: 'body' });
    expect(parseAcquireJson(`{"key":"k","x":${nested(half)}}`)).toMatchObject({
      ok: false,
      field: 'body',
    });
  });

  it('does not count brackets, braces or colons inside strings, escaped quotes included', () => {
    const noise = `${'[{:'.repeat(5000)}\\"\\\\`;
    expect(parseAcquireJson(`{"key":"k","note":"${noise}"}`)).toMatchObject({ ok: true });
    expect(parseJsonBody(`["\\\\", ${nested(MAX_JSON_DEPTH - 1)}]`)).toMatchObject({ ok: true });
  });

  it(`refuses more than ${MAX_JSON_CONTAINERS} objects and arrays in all, however shallow`, () => {
    const many = (n: number): string => `[${Array.from({ length: n - 1 }, () => '[]').join(',')}]`;
    expect(parseJsonBody(many(MAX_JSON_CONTAINERS))).toMatchObject({ ok: true });
    expect(parseJsonBody(many(MAX_JSON_CONTAINERS + 1))).toEqual({
      ok: false,
      field: 'body',
      reason: `body: has more than ${MAX_JSON_CONTAINERS} objects and arrays`,
    });
  });

  it(`refuses an object of more than ${MAX_JSON_MEMBERS} members`, () => {
    const object = (n: number): string =>
      `{${Array.from({ length: n }, (_, i) => `"m${i}":{"a":1,"b":2}`).join(',')}}`;
    expect(parseJsonBody(object(MAX_JSON_MEMBERS))).toMatchObject({ ok: true });
    expect(parseJsonBody(object(MAX_JSON_MEMBERS + 1))).toEqual({
      ok: false,
      field: 'body',
      reason: `body: has an object of more than ${MAX_JSON_MEMBERS} members`,
    });
  });

  it('still takes a batch of 1 000 entries, each with a cost of several units', () => {
    const requests = Array.from({ length: 1000 }, (_, i) => ({
      key: `user-${i}`,
      quota: 'api',
      cost: { requests: 1, tokens: 100, images: 2 },
      requestId: `r-${i}`,
    }));
    const result = parseBatchJson(Buffer.from(JSON.stringify({ requests })));
    expect(result.ok && result.value.length).toBe(1000);
  });
});
