import { exactKeyMatch, matchPatternProblem, REGEX_MATCH_PREFIX } from '../key-match';
import { isQuotaName } from '../messages/limits';
import type { QuotaSpec } from '../quota-spec';
import { normaliseKey } from '../validation/key';
import { failureRule } from '../validation/parse-result';
import { GOCC_FILE_FIELDS, GOCC_KEY_FIELDS as KEY } from './config-fields';
import { goccDefaultQuota, type GoccSettings } from './gocc-default';
import { fnv1a32, goccQuotas, type GoccEntry } from './gocc-merge';
import type { ConfigPath, IssueList } from './issues';
import { fieldValue, isMapping, readBoolean, readInteger, requireField } from './readers';

/**
 * GoCC's JSON config, `{ "keys": [...] }`, taken as GoCC takes it: unknown fields are ignored, a
 * number left at 0 means "not set" (Go's zero value), and every entry whose pattern matches a key
 * applies to it, in file order (gocc-merge.ts), over the environment's numbers.
 */

/**
 * Stable across reordering of the file (counters are kept per quota name): `gocc:<pattern>` or
 * `gocc:re:<pattern>` when that is a valid quota name, else a hash of the pattern.
 */
export function goccQuotaName(pattern: string, isRegex: boolean): string {
  const kind = isRegex ? REGEX_MATCH_PREFIX : '';
  const readable = `gocc:${kind}${pattern}`;
  return isQuotaName(readable) ? readable : `gocc:${kind}fnv-${fnv1a32(pattern)}`;
}

/** A number of an entry: 0 or absent is unset (Go's zero value), so it merges away. */
function setting(
  mapping: Readonly<Record<string, unknown>>,
  field: string,
  path: ConfigPath,
  issues: IssueList,
): number | undefined {
  const value = readInteger(mapping, field, path, issues, { min: 0 });
  return value === 0 ? undefined : value;
}

function readMatch(
  pattern: string,
  isRegex: boolean,
  path: ConfigPath,
  issues: IssueList,
): { match: string; literal: string | undefined } | undefined {
  if (isRegex) {
    const match = `${REGEX_MATCH_PREFIX}${pattern}`;
    const problem = matchPatternProblem(match);
    if (problem === undefined) return { match, literal: undefined };
    return issues.add([...path, KEY.pattern], problem);
  }
  const key = normaliseKey(pattern, KEY.pattern);
  if (!key.ok) return issues.add([...path, KEY.pattern], failureRule(key));
  return { match: exactKeyMatch(key.value), literal: key.value };
}

/** The same regex again is an entry of its own (both merge): its quota needs a name of its own. */
function uniqueName(pattern: string, isRegex: boolean, taken: ReadonlySet<string>): string {
  const first = goccQuotaName(pattern, isRegex);
  if (!isRegex || !taken.has(first)) return first;
  for (let n = 2; ; n++) {
    const name = goccQuotaName(`${pattern}\u0000${n}`, true);
    if (!taken.has(name)) return name;
  }
}

function readKey(
  value: unknown,
  path: ConfigPath,
  issues: IssueList,
  taken: ReadonlySet<string>,
): GoccEntry | undefined {
  if (!isMapping(value)) return issues.add(path, 'must be an object with key_pattern');
  if (!requireField(value, KEY.pattern, path, issues)) return undefined;
  const pattern = fieldValue(value, KEY.pattern);
  if (typeof pattern !== 'string' || pattern === '') {
    return issues.add([...path, KEY.pattern], 'must be a non-empty string');
  }
  const isRegex = readBoolean(value, KEY.isRegex, path, issues) ?? false;
  const maxRequests = setting(value, KEY.maxRequests, path, issues);
  const maxRequestsInQueue = setting(value, KEY.maxRequestsInQueue, path, issues);
  const windowMillis = setting(value, KEY.windowMillis, path, issues);
  const sets: Partial<GoccSettings> = {
    ...(maxRequests !== undefined && { maxRequests }),
    ...(maxRequestsInQueue !== undefined && { maxRequestsInQueue }),
    ...(windowMillis !== undefined && { windowMillis }),
  };
  const matched = readMatch(pattern, isRegex, path, issues);
  if (matched === undefined) return undefined;
  return { name: uniqueName(pattern, isRegex, taken), ...matched, sets };
}

export function readGoccConfig(
  root: Readonly<Record<string, unknown>>,
  defaults: GoccSettings,
  issues: IssueList,
): readonly QuotaSpec[] {
  const keys = fieldValue(root, GOCC_FILE_FIELDS.keys);
  if (!Array.isArray(keys)) {
    issues.add([GOCC_FILE_FIELDS.keys], 'must be a list of GoCC key configs');
    return [goccDefaultQuota(defaults)];
  }
  const entries: GoccEntry[] = [];
  const names = new Set<string>();
  keys.forEach((item: unknown, index) => {
    const entry = readKey(item, [GOCC_FILE_FIELDS.keys, index], issues, names);
    if (entry === undefined) return;
    names.add(entry.name);
    entries.push(entry);
  });
  const before = issues.count;
  const quotas = [goccDefaultQuota(defaults)];
  if (before > 0) return quotas;
  return [...quotas, ...goccQuotas(entries, defaults, issues, [GOCC_FILE_FIELDS.keys])];
}
