import fc from 'fast-check';
import { RE2JS } from 're2js';
import { compileKeyPattern } from './key-pattern';

/** The glob as a backtracking regex, the old implementation: a reference on short inputs only. */
function referenceGlob(glob: string, key: string): boolean {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's').test(key);
}

describe('compileKeyPattern: globs', () => {
  it.each<[string, string, boolean]>([
    ['api-*', 'api-1', true],
    ['api-*', 'api-', true],
    ['api-*', 'xapi-1', false],
    ['*', '', true],
    ['*-beta', 'x-beta', true],
    ['*-beta', 'x-betax', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['ab*ba', 'aba', false], // head and tail may not overlap
    ['ab*ba', 'abba', true],
    ['a**b', 'ab', true],
    ['x*y*y', 'xyy', true],
    ['x*y*y', 'xy', false],
    ['re*', 're:x', true],
    ['*.*', 'a.b', true], // regex syntax in a glob is literal
    ['*.*', 'ab', false],
    ['exact', 'exact', true],
    ['exact', 'exactexact', false],
    ['*😀*', 'a😀b', true],
  ])('%j on %j is %s', (glob, key, expected) => {
    expect(compileKeyPattern(glob).test(key)).toBe(expected);
    expect(referenceGlob(glob, key)).toBe(expected);
  });

  it('answers as the backtracking regex did, on every short glob and key', () => {
    const text = (max: number) =>
      fc.string({ unit: fc.constantFrom('a', 'b', '*', '.'), maxLength: max });
    fc.assert(
      fc.property(text(6), text(8), (glob, key) => {
        const plainKey = key.replaceAll('*', 'a');
        expect(compileKeyPattern(glob).test(plainKey)).toBe(referenceGlob(glob, plainKey));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps the literal prefix before the first star for "longest prefix wins"', () => {
    expect(compileKeyPattern('api-admin-*').prefixLength).toBe(10);
    expect(compileKeyPattern('*x').prefixLength).toBe(0);
  });

  it('decides a glob of many stars on a 256-character key (the backtracking regex took minutes)', () => {
    // `^.*a.*a...b$` on 100 "a"s took 21 s with 5 stars in V8 and grows by ~20x per star.
    const glob = `*${'a*'.repeat(40)}b`;
    expect(compileKeyPattern(glob).test('a'.repeat(256))).toBe(false);
    expect(compileKeyPattern(glob).test(`${'a'.repeat(255)}b`)).toBe(true);
  });
});

describe('compileKeyPattern: re: patterns run on RE2', () => {
  it.each<[string, string, boolean]>([
    ['re:^user-[0-9]+$', 'user-42', true],
    ['re:^user-[0-9]+$', 'user-42x', false],
    ['re:-beta$', 'x-beta', true], // unanchored, as RegExp.test
    ['re:(?i)^API-', 'api-1', true],
    ['re:^.$', '😀', true], // code points, as the `u` flag had it
    ['re:^\\p{Greek}+$', 'αβγ', true],
  ])('%j on %j is %s', (pattern, key, expected) => {
    expect(compileKeyPattern(pattern).test(key)).toBe(expected);
  });

  it('is the linear engine: a nested quantifier on a hostile key is decided at once', () => {
    // V8's RegExp took 1.7 s on 29 characters and 4x more per 2 characters; 256 would never end.
    const pattern = compileKeyPattern('re:^(a+)+$');
    expect(pattern.test(`${'a'.repeat(255)}!`)).toBe(false);
    expect(pattern.test('a'.repeat(256))).toBe(true);
  });

  it('refuses what RE2 cannot run in linear time: backreferences and lookaround', () => {
    expect(() => compileKeyPattern('re:(a)\\1')).toThrow(/invalid escape sequence/);
    expect(() => compileKeyPattern('re:a(?=b)')).toThrow(/unsupported Perl syntax/);
    expect(() => RE2JS.compile('a(?<=b)')).toThrow();
  });

  it('takes the literal prefix of an anchored regex', () => {
    expect(compileKeyPattern('re:^user-vip-\\d+$').prefixLength).toBe(9);
    expect(compileKeyPattern('re:-beta$').prefixLength).toBe(0);
  });
});
