import fc from 'fast-check';
import { RE2JS } from 're2js';
import { Engine } from '../engine';
import type { QuotaSpec } from '../types';
import { compileKeyPattern, requiredRegexHead } from './key-pattern';
import { linearResolution } from './linear-resolution.test-util';

const limits = [
  { name: 'rps', unit: 'requests', limit: 10, windowMs: 1000, algorithm: 'fixed_window' as const },
];

/** The engine's answer for `key`, after building its index `budget` patterns at a time. */
function indexed(
  quotas: readonly QuotaSpec[],
  budget = Infinity,
): (key: string) => string | undefined {
  const engine = new Engine([], { shards: 1 });
  const prepared = engine.prepareQuotas(quotas);
  while (!prepared.step(budget));
  engine.commitQuotas(prepared, 0);
  return (key) => engine.resolve(undefined, key)?.name;
}

describe('requiredRegexHead', () => {
  it.each<[string, string]>([
    ['^abc', 'abc'],
    ['^abc$', 'abc'],
    ['^abc?', 'ab'], // c may be absent
    ['^abc+', 'ab'],
    ['^abc*d', 'ab'],
    ['^ab{0}', 'a'],
    ['^a\\.b-', 'a.b-'], // escaped punctuation is literal
    ['^a\\.?', 'a'],
    ['^a\\d', 'a'],
    ['^a\\Qb', 'a'],
    ['^a[b]', 'a'],
    ['^a(b)', 'a'],
    ['^ab|cd', ''], // the second alternative does not start with "ab"
    ['^a(b|c)', ''],
    ['abc', ''], // unanchored
    ['(?i)^abc', ''],
    ['^(?i)abc', ''],
    ['^😀x', '😀x'],
    ['^a😀?', 'a'], // the whole code point is optional, not half of it
    ['^a\uFFFDb', 'a'],
  ])('%j requires %j', (source, head) => {
    expect(requiredRegexHead(source)).toBe(head);
  });

  it('is a prefix of every key the regex matches', () => {
    const syntax = fc.string({
      unit: fc.constantFrom(
        'a',
        'b',
        '-',
        '^',
        '$',
        '.',
        '*',
        '+',
        '?',
        '(',
        ')',
        '|',
        '\\',
        '[',
        ']',
        '{',
        '}',
        '1',
        'd',
      ),
      maxLength: 8,
    });
    const key = fc.string({ unit: fc.constantFrom('a', 'b', '-', '1', '.'), maxLength: 8 });
    fc.assert(
      fc.property(syntax, fc.array(key, { minLength: 1, maxLength: 20 }), (body, keys) => {
        const source = `^${body}`;
        let regex: RE2JS;
        try {
          regex = RE2JS.compile(source);
        } catch {
          return; // not a regex RE2 accepts
        }
        const head = requiredRegexHead(source);
        for (const k of [...keys, head, `${head}a`]) {
          if (regex.test(k)) expect(k.startsWith(head)).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('compileKeyPattern: the ends an index files a pattern under', () => {
  it.each<[string, string, string]>([
    ['api-*', 'api-', ''],
    ['*-beta', '', '-beta'],
    ['a*b*c', 'a', 'c'],
    ['*', '', ''],
    ['re:^user-[0-9]+$', 'user-', ''],
    ['re:-beta$', '', ''],
  ])('%j: head %j, tail %j', (match, head, tail) => {
    expect(compileKeyPattern(match)).toMatchObject({ head, tail });
  });
});

/** A random quota set: globs, exact keys, `re:` patterns, some of them GoCC-style entries. */
const letters = fc.constantFrom('a', 'b', '-');
const literal = (max: number) => fc.string({ unit: letters, maxLength: max });
const glob = fc.string({ unit: fc.constantFrom('a', 'b', '-', '*'), minLength: 1, maxLength: 5 });
const regex = fc
  .tuple(
    fc.constantFrom('^%', '^%$', '^%?', '^%+b', '^%|b', '%$', '%', '^[ab]%', '^%\\-', '(?i)^%'),
    literal(3),
  )
  .map(([template, text]) => `re:${template.replace('%', text === '' ? 'a' : text)}`);
const match = fc.oneof(
  glob,
  glob,
  literal(4).filter((s) => s !== ''),
  regex,
);
const quotaSet = fc
  .array(fc.record({ match, entry: fc.boolean(), field: fc.constantFrom('x', 'y') }), {
    maxLength: 40, // past 8 patterns the index looks keys up, below it scans them
  })
  .map((items) => {
    const quotas: QuotaSpec[] = [{ name: 'default', limits }];
    items.forEach(({ match: m, entry, field }, i) => {
      const merge = entry ? { [field]: `q${i}` } : undefined;
      quotas.push({ name: `q${i}`, match: m, limits, ...(merge && { merge }) });
    });
    // Merged results of two entries, as the GoCC reader makes them.
    const entries = quotas.filter((q) => q.merge !== undefined);
    for (let i = 1; i < entries.length; i += 2) {
      const merge = { ...entries[i - 1]!.merge, ...entries[i]!.merge };
      quotas.push({ name: `merged${i}`, limits, merge });
    }
    return quotas;
  });
const keys = fc.array(literal(7), { minLength: 1, maxLength: 40 });

describe('the pattern index answers what the linear scan answers', () => {
  it('on random quota sets and keys', () => {
    fc.assert(
      fc.property(quotaSet, keys, fc.constantFrom(1, 3, Infinity), (quotas, tried, budget) => {
        const expected = linearResolution(quotas);
        const actual = indexed(quotas, budget);
        for (const key of tried) {
          expect({ key, quota: actual(key) }).toEqual({ key, quota: expected(key) });
          // Again, from the per-key cache.
          expect(actual(key)).toBe(expected(key));
        }
      }),
      { numRuns: 1500 },
    );
  });

  it.each<[string, string[], string, string | undefined]>([
    ['longest literal prefix, across heads and tails', ['a*', 'ab*', '*b'], 'abb', 'q1'],
    ['a tail-filed glob with the longer prefix wins', ['a*', 'ab*xyz', '*xyz'], 'abqxyz', 'q1'],
    ['the first defined on a tie', ['*x', '*yx', 'b*'], 'ayx', 'q0'],
    ['an unanchored regex ranks with prefix 0', ['re:b', '*b'], 'ab', 'q0'],
    ['a regex prefix beats a shorter glob', ['user-*', 're:^user-vip-\\d+$'], 'user-vip-7', 'q1'],
    ['the regex heuristic prefix counts "abc" in ^abc?', ['ab*', 're:^abc?d'], 'abd', 'q1'],
    ['nothing fits: default', ['a*', 're:^b'], 'c', 'default'],
  ])('%s', (_what, matches, key, expected) => {
    // Patterns no key here matches, so that the index looks keys up rather than scanning.
    const fillers = Array.from({ length: 10 }, (_, i) => `~filler${i}*`);
    const quotas: QuotaSpec[] = [
      { name: 'default', limits },
      ...[...matches, ...fillers].map((m, i) => ({ name: `q${i}`, match: m, limits })),
    ];
    expect(indexed(quotas)(key)).toBe(expected);
    expect(linearResolution(quotas)(key)).toBe(expected);
  });
});
