import { RE2JS } from 're2js';
import { exactKeyMatch, matchPatternProblem } from './key-match';

describe('exactKeyMatch', () => {
  it('keeps plain keys as globs without wildcards', () => {
    expect(exactKeyMatch('gpt-4o')).toBe('gpt-4o');
    expect(exactKeyMatch('claude-haiku-3.5')).toBe('claude-haiku-3.5');
  });

  it('turns keys with glob or regex syntax into anchored, escaped regexes', () => {
    expect(exactKeyMatch('a*b')).toBe('re:^a\\*b$');
    expect(exactKeyMatch('re:x')).toBe('re:^re:x$');
    const key = 'a.b-c/d*(e)[f]{2}|g?h+i$\\';
    const pattern = exactKeyMatch(key);
    expect(matchPatternProblem(pattern)).toBeUndefined();
    // Compiled as the engine compiles it, on RE2.
    const regex = RE2JS.compile(pattern.slice(3));
    expect(regex.test(key)).toBe(true);
    expect(regex.test(key.replace('.', 'X'))).toBe(false);
    expect(regex.test(`${key}z`)).toBe(false);
  });
});

describe('matchPatternProblem', () => {
  it.each([
    'api-*',
    '*',
    're:^user-[0-9]+$',
    'exact-key',
    // RE2 (Go regexp) syntax, as GoCC's key_pattern_is_regex has it
    're:(?i)^api-',
    're:^[[:alpha:]]+$',
    're:^\\pL+$',
    're:^\\x{e9}$',
    're:^(a+)+$', // harmless on RE2: linear whatever the key
    // Literals in RE2, which JavaScript's Unicode mode refused
    're:a\\-b',
    're:x{',
  ])('accepts %j', (pattern) => {
    expect(matchPatternProblem(pattern)).toBeUndefined();
  });

  it.each<[string, RegExp]>([
    ['', /empty/],
    ['re:', /empty regex/],
    ['re:(', /does not compile \(missing closing \)/],
    ['re:[a-', /does not compile/],
    ['re:x{1001}', /does not compile \(invalid repeat count/],
    ['re:(?:[\\pL\\pN]{1,1000}){1,1000}', /does not compile \(expression too large/],
    ['a\u0000b', /control/],
    ['x'.repeat(1025), /at most 1024/],
  ])('refuses %j', (pattern, problem) => {
    expect(matchPatternProblem(pattern)).toMatch(problem);
  });

  it.each<[string, string]>([
    ['re:^a(?=b)', 'has lookaround "(?=": match regexes use RE2 syntax'],
    ['re:^a(?!b)', 'has lookaround "(?!"'],
    ['re:(?<=a)b', 'has lookaround "(?<="'],
    ['re:(?<!a)b', 'has lookaround "(?<!"'],
    ['re:^(a)\\1$', 'has a backreference "\\1"'],
    ['re:^(?<x>a)\\k<x>$', 'has a backreference "\\k"'],
    ['re:^\\u00e9$', 'has the escape "\\u", which RE2 writes \\x{hhhh}'],
  ])('refuses %j, saying why', (pattern, problem) => {
    expect(matchPatternProblem(pattern)).toContain(problem);
  });
});
