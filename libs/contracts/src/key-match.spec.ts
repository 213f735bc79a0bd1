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
    // Compiled as the engine compiles it, in Unicode mode.
    const regex = new RegExp(pattern.slice(3), 'u');
    expect(regex.test(key)).toBe(true);
    expect(regex.test(key.replace('.', 'X'))).toBe(false);
    expect(regex.test(`${key}z`)).toBe(false);
  });
});

describe('matchPatternProblem', () => {
  it.each(['api-*', '*', 're:^user-[0-9]+$', 'exact-key'])('accepts %j', (pattern) => {
    expect(matchPatternProblem(pattern)).toBeUndefined();
  });

  it.each<[string, RegExp]>([
    ['', /empty/],
    ['re:', /empty regex/],
    ['re:(', /does not compile/],
    ['re:[a-', /does not compile/],
    ['re:a\\-b', /does not compile/],
    ['re:x{', /does not compile/],
    ['a\u0000b', /control/],
    ['x'.repeat(1025), /at most 1024/],
  ])('refuses %j', (pattern, problem) => {
    expect(matchPatternProblem(pattern)).toMatch(problem);
  });
});
