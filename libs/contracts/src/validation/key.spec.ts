import { normaliseKey, parseKey } from './key';

describe('keys', () => {
  it('returns printable ASCII unchanged, as the same string', () => {
    const key = 'user-42@example.com';
    const result = normaliseKey(key);
    expect(result.ok && result.value).toBe(key);
  });

  it('normalises to NFC before measuring bytes', () => {
    // 'e' + combining acute is 3 bytes; NFC 'é' is 2. 86 of them: 258 bytes raw, 172 in NFC.
    const decomposed = 'e\u0301'.repeat(86);
    const result = normaliseKey(decomposed);
    expect(result).toEqual({ ok: true, value: '\u00e9'.repeat(86) });
  });

  it('counts UTF-8 bytes, not characters', () => {
    expect(normaliseKey('€'.repeat(85)).ok).toBe(true); // 255 bytes
    expect(normaliseKey('€'.repeat(86)).ok).toBe(false); // 258 bytes
    expect(normaliseKey('𝄞'.repeat(64)).ok).toBe(true); // 256 bytes
    expect(normaliseKey('𝄞'.repeat(64) + 'a').ok).toBe(false);
  });

  it.each([
    ['NUL', '\u0000'],
    ['tab', 'a\tb'],
    ['DEL', 'a\u007f'],
    ['C1 NEL', 'a\u0085'],
    ['C1 end', '\u009f'],
  ])('refuses %s', (_name, key) => {
    expect(normaliseKey(key)).toMatchObject({
      ok: false,
      field: 'key',
      reason: expect.stringMatching(/control/),
    });
  });

  it.each([
    ['one space', ' '],
    ['spaces', '    '],
    ['no-break spaces', '\u00a0\u00a0'],
    ['ideographic space', '\u3000'],
    ['line separator', '\u2028'],
  ])('refuses a key of whitespace only: %s', (_name, key) => {
    expect(normaliseKey(key)).toEqual({
      ok: false,
      field: 'key',
      reason: 'key: must not be whitespace only',
    });
  });

  it('keeps keys that only start or end with whitespace', () => {
    expect(normaliseKey(' a ')).toEqual({ ok: true, value: ' a ' });
    expect(normaliseKey('\u00a0b')).toEqual({ ok: true, value: '\u00a0b' });
  });

  it('refuses unpaired surrogates, which are not UTF-8', () => {
    expect(normaliseKey('a\udc00b')).toMatchObject({ ok: false, field: 'key' });
    expect(normaliseKey('\ud83d')).toMatchObject({ ok: false, field: 'key' });
  });

  it('refuses huge strings without normalising them', () => {
    expect(normaliseKey('é'.repeat(1_000_000))).toMatchObject({ ok: false, field: 'key' });
  });

  it('parseKey checks the type and reports under the field name given', () => {
    expect(parseKey(undefined, 'path.key')).toMatchObject({ ok: false, field: 'path.key' });
    expect(parseKey('', ':key')).toEqual({
      ok: false,
      field: ':key',
      reason: ':key: must be 1..256 bytes of UTF-8',
    });
    expect(parseKey('abc')).toEqual({ ok: true, value: 'abc' });
  });
});
