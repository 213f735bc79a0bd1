import { exactKeyMatch, matchPatternProblem, REGEX_MATCH_PREFIX } from '../key-match';
import { isQuotaName } from '../messages/limits';
import type { QuotaSpec } from '../quota-spec';
import { normaliseKey } from '../validation/key';
import { failureRule } from '../validation/parse-result';
import { GOCC_FILE_FIELDS, GOCC_KEY_FIELDS as KEY } from './config-fields';
import { goccDefaultQuota, goccQuota, type GoccSettings } from './gocc-default';
import type { ConfigPath, IssueList } from './issues';
import { fieldValue, isMapping, readBoolean, readInteger, requireField } from './readers';

/**
 * GoCC's JSON config, `{ "keys": [...] }`, taken as GoCC takes it: unknown fields are ignored, and
 * a number left at 0 means "not set" (Go's zero value), so it falls back to the environment.
 */

function fnv1a32(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * Stable across reordering of the file (counters are kept per quota name): `gocc:<pattern>` or
 * `gocc:re:<pattern>` when that is a valid quota name, else a hash of the pattern.
 */
export function goccQuotaName(pattern: string, isRegex: boolean): string {
  const kind = isRegex ? REGEX_MATCH_PREFIX : '';
  const readable = `gocc:${kind}${pattern}`;
  return isQuotaName(readable) ? readable : `gocc:${kind}fnv-${fnv1a32(pattern)}`;
}

function setting(
  mapping: Readonly<Record<string, unknown>>,
  field: string,
  path: ConfigPath,
  issues: IssueList,
  fallback: number,
): number {
  const value = readInteger(mapping, field, path, issues, { min: 0 });
  return value === undefined || value === 0 ? fallback : value;
}

function readMatch(
  pattern: string,
  isRegex: boolean,
  path: ConfigPath,
  issues: IssueList,
): string | undefined {
  if (isRegex) {
    const match = `${REGEX_MATCH_PREFIX}${pattern}`;
    const problem = matchPatternProblem(match);
    return problem === undefined ? match : issues.add([...path, KEY.pattern], problem);
  }
  const key = normaliseKey(pattern, KEY.pattern);
  if (!key.ok) return issues.add([...path, KEY.pattern], failureRule(key));
  return exactKeyMatch(key.value);
}

function readKey(
  value: unknown,
  path: ConfigPath,
  issues: IssueList,
  defaults: GoccSettings,
): QuotaSpec | undefined {
  if (!isMapping(value)) return issues.add(path, 'must be an object with key_pattern');
  if (!requireField(value, KEY.pattern, path, issues)) return undefined;
  const pattern = fieldValue(value, KEY.pattern);
  if (typeof pattern !== 'string' || pattern === '') {
    return issues.add([...path, KEY.pattern], 'must be a non-empty string');
  }
  const isRegex = readBoolean(value, KEY.isRegex, path, issues) ?? false;
  const settings: GoccSettings = {
    maxRequests: setting(value, KEY.maxRequests, path, issues, defaults.maxRequests),
    maxRequestsInQueue: setting(
      value,
      KEY.maxRequestsInQueue,
      path,
      issues,
      defaults.maxRequestsInQueue,
    ),
    windowMillis: setting(value, KEY.windowMillis, path, issues, defaults.windowMillis),
  };
  const match = readMatch(pattern, isRegex, path, issues);
  return match === undefined
    ? undefined
    : goccQuota(goccQuotaName(pattern, isRegex), match, settings);
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
  const quotas: QuotaSpec[] = [goccDefaultQuota(defaults)];
  const names = new Set<string>();
  keys.forEach((item: unknown, index) => {
    const quota = readKey(item, [GOCC_FILE_FIELDS.keys, index], issues, defaults);
    if (quota === undefined) return;
    if (names.has(quota.name)) {
      issues.add(
        [GOCC_FILE_FIELDS.keys, index, KEY.pattern],
        'is the same pattern as an earlier key',
      );
    }
    names.add(quota.name);
    quotas.push(quota);
  });
  return quotas;
}
