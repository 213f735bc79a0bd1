import { CONTROL_CHARACTER } from './messages/control-characters';

/** The `match` patterns of a quota (CONTRACT section 1): a glob with `*`, or `re:<regex>`. */

export const REGEX_MATCH_PREFIX = 're:';
/** Keys are at most 256 bytes; a longer pattern is a mistake, and long regexes are costly. */
export const MAX_MATCH_PATTERN_LENGTH = 1024;

/** Regex syntax characters: the only ones that may be escaped in the engine's `u`-mode regexes. */
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
    // The engine compiles match regexes in Unicode mode, which is stricter: check the same way.
    new RegExp(source, 'u');
    return undefined;
  } catch (error) {
    return `has a regex that does not compile (${error instanceof Error ? error.message : String(error)})`;
  }
}
