import { RE2JS, RE2JSSyntaxException } from 're2js';
import { CONTROL_CHARACTER } from './messages/control-characters';

/**
 * The `match` patterns of a quota (docs/contract.md, Concepts): a glob with `*`, or `re:<regex>`.
 */

export const REGEX_MATCH_PREFIX = 're:';
/** Keys are at most 256 bytes; a longer pattern is a mistake, and long regexes are costly. */
export const MAX_MATCH_PATTERN_LENGTH = 1024;

/** Regex syntax characters: escaped, they stand for themselves in RE2 and in JavaScript regexes. */
const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|]/g;

/**
 * A pattern that matches exactly `key`. A plain glob when the key has no `*` and does not itself
 * look like a regex pattern; otherwise an anchored, escaped regex, which needs no glob escaping
 * convention on the engine's side.
 */
export function exactKeyMatch(key: string): string {
  if (!key.includes('*') && !key.includes('\\') && !key.startsWith(REGEX_MATCH_PREFIX)) return key;
  return `${REGEX_MATCH_PREFIX}^${key.replace(REGEX_SPECIAL, '\\$&')}$`;
}

const LINEAR_RULE =
  'match regexes use RE2 syntax, which has no lookaround and no backreferences, so that ' +
  'matching a key takes time linear in its length';

/** Why RE2 refused `source`, by re2js's error and the part of the pattern it names. */
function regexRefusal(error: RE2JSSyntaxException): string {
  const at = error.input ?? '';
  const lookaround = /^\(\?<?[=!]/.exec(at);
  if (lookaround !== null) return `has lookaround "${lookaround[0]}": ${LINEAR_RULE}`;
  const backreference = /^\\(?:[1-9]|k)/.exec(at);
  if (backreference !== null) {
    return `has a backreference "${backreference[0]}": ${LINEAR_RULE}`;
  }
  if (at === '\\u') return 'has the escape "\\u", which RE2 writes \\x{hhhh}';
  return `has a regex that does not compile (${error.message.replace(/^error parsing regexp: /, '')})`;
}

/** Why `pattern` is not a usable match pattern, or undefined when it is. */
export function matchPatternProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return 'must not be empty';
  if (pattern.length > MAX_MATCH_PATTERN_LENGTH) {
    return `must be at most ${MAX_MATCH_PATTERN_LENGTH} characters`;
  }
  if (!pattern.startsWith(REGEX_MATCH_PREFIX)) {
    return CONTROL_CHARACTER.test(pattern) ? 'must not contain control characters' : undefined;
  }
  const source = pattern.slice(REGEX_MATCH_PREFIX.length);
  if (source.length === 0) return 'has an empty regex after "re:"';
  try {
    // The engine matches with RE2 (re2js): no backtracking, so no key can make a match slow.
    RE2JS.compile(source);
    return undefined;
  } catch (error) {
    if (error instanceof RE2JSSyntaxException) return regexRefusal(error);
    return `has a regex that does not compile (${error instanceof Error ? error.message : String(error)})`;
  }
}
