import { fnv1a, quotaSeed } from './fnv1a';

describe('fnv1a', () => {
  // Reference values of 32-bit FNV-1a over the UTF-8 bytes.
  it.each([
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['foobar', 0xbf9cf968],
  ])('hashes %j to the reference value', (text, want) => {
    expect(fnv1a(text)).toBe(want);
  });

  it('hashes non-ASCII text as its UTF-8 bytes', () => {
    const bytes = Buffer.from('clé-😀', 'utf8');
    let h = 0x811c9dc5;
    for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
    expect(fnv1a('clé-😀')).toBe(h);
  });

  it('continues from a quota seed as if hashing quota, a zero byte, then the key', () => {
    const bytes = Buffer.concat([Buffer.from('api'), Buffer.from([0]), Buffer.from('user-1')]);
    let h = 0x811c9dc5;
    for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
    expect(fnv1a('user-1', quotaSeed('api'))).toBe(h);
  });
});
