import { RE2JS } from 're2js';

/**
 * How a quota's `match` tests keys, in time linear in the key's length whatever the pattern:
 * `re:` patterns run on RE2 (re2js, automata without backtracking), globs on a greedy scan.
 * V8's own RegExp backtracks, so `^(a+)+$` or a glob of many `*` could hold the event loop for
 * minutes on one 40-character key.
 */
export interface KeyPattern {
  /** Literal characters the pattern requires at the start of the key: longest prefix wins. */
  readonly prefixLength: number;
  /** Text every key the pattern matches starts with ('' if none is known): the index's way in. */
  readonly head: string;
  /** Text every key the pattern matches ends with ('' if none is known). */
  readonly tail: string;
  readonly test: (key: string) => boolean;
}

export const REGEX_PATTERN_PREFIX = 're:';

const REGEX_META = /[\\^$.*+?()[\]{}|]/;

/** Literal characters a regex requires at the start of the key, for "longest prefix wins". */
function regexLiteralPrefix(source: string): number {
  if (!source.startsWith('^')) return 0;
  let n = 0;
  for (let i = 1; i < source.length && !REGEX_META.test(source[i]!); i++) n++;
  return n;
}

/** Quantifiers: the character before one may be absent or repeated, so it is not required. */
const QUANTIFIER = /^[*+?{]/;
/** `\` before ASCII punctuation stands for that character in RE2. */
const ESCAPED_LITERAL = /^\\[!-/:-@[-`{-~]/;

/**
 * Text every key an `re:` pattern matches starts with: the literal characters right after a
 * leading `^`, up to the first syntax (a character a quantifier follows is left out). Nothing
 * when the pattern has a `|` anywhere (an alternative may not start with them). Short of the
 * pattern's prefixLength at times (that counts a quantified last character), never longer than
 * what every match requires; U+FFFD, which RE2 also matches for an unpaired surrogate, ends it.
 */
export function requiredRegexHead(source: string): string {
  if (!source.startsWith('^') || source.includes('|')) return '';
  let head = '';
  let at = 1;
  while (at < source.length) {
    const escaped = ESCAPED_LITERAL.exec(source.slice(at, at + 2));
    const char = escaped !== null ? escaped[0][1]! : String.fromCodePoint(source.codePointAt(at)!);
    if (escaped === null && (REGEX_META.test(char) || char === '\uFFFD')) break;
    const next = at + (escaped !== null ? 2 : char.length);
    if (QUANTIFIER.test(source.slice(next, next + 1))) break;
    head += char;
    at = next;
  }
  return head;
}

/**
 * A glob with `*` (any run of characters, none included). The parts between stars are found
 * left to right, each at its first place after the previous one: the first part is a prefix,
 * the last a suffix, and placing a middle part as early as possible never loses a match. Each
 * part is searched once, so a key costs at most its length times the pattern's.
 */
function globTest(glob: string): (key: string) => boolean {
  const parts = glob.split('*');
  if (parts.length === 1) return (key) => key === glob;
  const head = parts[0]!;
  const tail = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1).filter((part) => part !== '');
  const shortest = parts.reduce((sum, part) => sum + part.length, 0);
  return (key) => {
    if (key.length < shortest || !key.startsWith(head) || !key.endsWith(tail)) return false;
    const end = key.length - tail.length;
    let at = head.length;
    for (const part of middle) {
      const found = key.indexOf(part, at);
      if (found < 0 || found + part.length > end) return false;
      at = found + part.length;
    }
    return true;
  };
}

/** A pattern matching `key` alone. */
export function exactPattern(key: string): KeyPattern {
  return { prefixLength: key.length, head: key, tail: key, test: (other) => other === key };
}

/**
 * Compiles a `match` pattern that is not a plain key: `re:<RE2 regex>` (unanchored, as
 * RegExp.test) or a glob with `*`. Throws re2js's syntax error for a regex RE2 refuses.
 */
export function compileKeyPattern(match: string): KeyPattern {
  if (!match.startsWith(REGEX_PATTERN_PREFIX)) {
    const star = match.indexOf('*');
    if (star < 0) return exactPattern(match);
    const tail = match.slice(match.lastIndexOf('*') + 1);
    return { prefixLength: star, head: match.slice(0, star), tail, test: globTest(match) };
  }
  const source = match.slice(REGEX_PATTERN_PREFIX.length);
  const regex = searchable(RE2JS.compile(source));
  return {
    prefixLength: regexLiteralPrefix(source),
    head: requiredRegexHead(source),
    tail: '',
    test: (key) => regex.test(key),
  };
}

/**
 * The same search as `regex`, usually twice as fast: behind a lazy `.*?`, re2js runs its DFA
 * instead of the slower one-pass matcher it picks for patterns anchored with `^`. `regex` is
 * compiled first, alone, so that only a valid regex is ever wrapped.
 */
function searchable(regex: RE2JS): RE2JS {
  try {
    return RE2JS.compile(`(?s:.*?)(?:${regex.pattern()})`);
  } catch {
    return regex; // the wrapper pushed it over RE2's size limit: it is valid alone
  }
}
