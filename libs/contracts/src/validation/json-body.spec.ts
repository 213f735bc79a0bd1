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

  it('offers a JSON variant of every message', () => {
    expect(parseBatchJson('{"requests":[{"key":"a"}]}')).toMatchObject({ ok: true });
    expect(parseReleaseJson('{"key":"a","requestId":"r"}')).toMatchObject({ ok: true });
    expect(parseUsageJson('{"key":"a","cost":{"tokens":1}}')).toMatchObject({ ok: true });
    expect(parseStatsJson('{"key":"a"}')).toMatchObject({ ok: true });
    expect(parseStatsJson('{')).toMatchObject({ ok: false, field: 'body' });
  });
});

/** Bytes as written: `\xff` is the byte 0xff, not the character U+00FF. */
const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');
const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

describe('JSON bodies that are not valid UTF-8', () => {
  it.each<[string, string, string]>([
    ['in the key', '{"key":"q-\xff\xfe"}', 'key'],
    ['in the key, reversed', '{"key":"q-\xfe\xff"}', 'key'],
    ['a truncated sequence', '{"key":"caf\xc3"}', 'key'],
    ['an overlong form of "/"', '{"key":"a\xc0\xafb"}', 'key'],
    ['an encoded surrogate', '{"key":"\xed\xa0\x80"}', 'key'],
    ['above U+10FFFF', '{"key":"\xf4\x90\x80\x80"}', 'key'],
    ['in the quota', '{"key":"k","quota":"q\xff"}', 'quota'],
    ['in a cost unit', '{"key":"k","cost":{"tok\xffens":1}}', 'cost["tok\\udcffens"]'],
    ['in a field the message ignores', '{"key":"k","note":"\x80"}', 'note'],
    ['in a member name', '{"key":"k","n\xff":1}', '["n\\udcff"]'],
    ['outside any string', '{"key":"k"}\xff', 'body'],
  ])('refuses invalid UTF-8 (%s)', (_label, body, field) => {
    const result = parseAcquireJson(bytes(body));
    expect(result).toMatchObject({ ok: false, field });
    expect(result.ok ? '' : result.reason.slice(field.length)).toMatch(
      /^: must be valid UTF-8 \(invalid byte 0x[0-9a-f]{2} at offset \d+\)$/,
    );
  });

  it('names the entry of a batch that holds them', () => {
    expect(parseBatchJson(bytes('{"requests":[{"key":"a"},{"key":"b\xff"}]}'))).toMatchObject({
      ok: false,
      field: 'requests[1].key',
    });
  });

  it('keeps a valid key with U+FFFD in it, distinct from the refused ones', () => {
    expect(parseAcquireJson(Buffer.from('{"key":"q-\ufffd\ufffd"}'))).toEqual({
      ok: true,
      value: { key: 'q-\ufffd\ufffd', cost: { requests: 1 } },
    });
  });

  it('takes every valid sequence length, astral characters included', () => {
    const key = 'a\u00e9\u20ac\u{1f600}';
    expect(parseAcquireJson(Buffer.from(JSON.stringify({ key })))).toMatchObject({
      ok: true,
      value: { key },
    });
  });
});

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

  it('finds where every string ends, whatever its length and wherever its escapes fall', () => {
    for (let length = 0; length <= 100; length++) {
      for (const escape of ['\\\\', '\\"', '\\u005b']) {
        const text = `${'['.repeat(length)}${escape}${'{'.repeat(3)}`;
        // Brackets in the string do not count; the ones after it do.
        expect(parseJsonBody(`{"a":"${text}","b":${nested(MAX_JSON_DEPTH - 1)}}`)).toMatchObject({
          ok: true,
        });
        expect(parseJsonBody(`{"a":"${text}","b":${nested(MAX_JSON_DEPTH)}}`)).toMatchObject({
          ok: false,
          field: 'body',
        });
      }
    }
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
