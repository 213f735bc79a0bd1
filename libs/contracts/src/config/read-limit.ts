import { isQuotaName, isUnitName } from '../messages/limits';
import { ALGORITHMS, MS_PER_DAY, type AlgorithmName, type LimitSpec } from '../quota-spec';
import { CONFIG_FIELDS } from './config-fields';
import { DURATION_RULE, parseDuration } from './duration';
import type { ConfigPath, IssueList } from './issues';
import {
  fieldValue,
  readChoice,
  readInteger,
  readMapping,
  readString,
  refuseUnknownFields,
  requireField,
} from './readers';
import { isIanaTimeZone } from './timezone';

const LIMIT_FIELDS: ReadonlySet<string> = new Set(CONFIG_FIELDS.limit);

/** Omitted `unit` counts requests; omitted `algorithm` is GoCC's and envoy's fixed window. */
const DEFAULT_UNIT = 'requests';
const DEFAULT_ALGORITHM: AlgorithmName = 'fixed_window';

export const NAME_RULE = {
  test: isQuotaName,
  description: 'must be 1..128 characters of [A-Za-z0-9._:-]',
} as const;

const UNIT_RULE = {
  test: isUnitName,
  description: 'must be a lowercase word [a-z][a-z0-9_]* of at most 64 characters',
} as const;

const TIMEZONE_RULE = {
  test: isIanaTimeZone,
  description: 'must be an IANA time zone such as UTC or America/Los_Angeles',
} as const;

function readWindowMs(
  mapping: Readonly<Record<string, unknown>>,
  path: ConfigPath,
  issues: IssueList,
): number | undefined {
  const window = fieldValue(mapping, 'window');
  const hasWindowMs = fieldValue(mapping, 'windowMs') !== undefined;
  if (window !== undefined && hasWindowMs) {
    return issues.add([...path, 'window'], 'give either window or windowMs, not both');
  }
  if (window === undefined) {
    if (!hasWindowMs) return issues.add([...path, 'window'], 'is required (or windowMs)');
    return readInteger(mapping, 'windowMs', path, issues, { min: 1 });
  }
  const ms = typeof window === 'string' ? parseDuration(window) : undefined;
  return ms ?? issues.add([...path, 'window'], `${DURATION_RULE} (or use windowMs: <number>)`);
}

/** Rules that tie fields together; only checked once each field is valid on its own. */
function checkCombination(limit: LimitSpec, path: ConfigPath, issues: IssueList): void {
  if (limit.burst !== undefined && limit.algorithm !== 'token_bucket') {
    issues.add([...path, 'burst'], 'only applies to algorithm token_bucket');
  }
  if (limit.precision !== undefined && limit.algorithm !== 'sliding_window') {
    issues.add([...path, 'precision'], 'only applies to algorithm sliding_window');
  }
  if (limit.timezone !== undefined && limit.align === undefined) {
    issues.add([...path, 'timezone'], 'only applies with align: calendar');
  }
  const capacity = limit.burst ?? limit.limit;
  if (limit.algorithm === 'token_bucket' && capacity * limit.windowMs > Number.MAX_SAFE_INTEGER) {
    // The engine refills in integer units of 1/windowMs; beyond 2^53 that arithmetic is inexact.
    issues.add(
      [...path, limit.burst === undefined ? 'limit' : 'burst'],
      'x windowMs must stay below 2^53',
    );
  }
  if (limit.align === 'calendar') {
    // A calendar window resets at a boundary; sliding and token-bucket windows have none.
    if (limit.algorithm !== 'fixed_window') {
      issues.add([...path, 'align'], 'calendar alignment needs algorithm fixed_window');
    }
    if (limit.windowMs % MS_PER_DAY !== 0) {
      issues.add([...path, 'align'], 'calendar alignment needs a window of whole days (1d, 7d)');
    }
  }
}

export function readLimit(
  value: unknown,
  path: ConfigPath,
  issues: IssueList,
): LimitSpec | undefined {
  const mapping = readMapping(value, path, issues, 'a limit');
  if (mapping === undefined) return undefined;
  const before = issues.count;
  refuseUnknownFields(mapping, LIMIT_FIELDS, path, issues);
  requireField(mapping, 'name', path, issues);
  requireField(mapping, 'limit', path, issues);
  const name = readString(mapping, 'name', path, issues, NAME_RULE);
  const unit = readString(mapping, 'unit', path, issues, UNIT_RULE) ?? DEFAULT_UNIT;
  const limit = readInteger(mapping, 'limit', path, issues, { min: 0 });
  const windowMs = readWindowMs(mapping, path, issues);
  const algorithm = readChoice(mapping, 'algorithm', path, issues, ALGORITHMS) ?? DEFAULT_ALGORITHM;
  const burst = readInteger(mapping, 'burst', path, issues, { min: 1 });
  const align = readChoice(mapping, 'align', path, issues, ['calendar'] as const);
  const timezone = readString(mapping, 'timezone', path, issues, TIMEZONE_RULE);
  const precision = readInteger(mapping, 'precision', path, issues, { min: 1, max: 120 });
  if (
    issues.count > before ||
    name === undefined ||
    limit === undefined ||
    windowMs === undefined
  ) {
    return undefined;
  }
  const spec: LimitSpec = {
    name,
    unit,
    limit,
    windowMs,
    algorithm,
    ...(burst !== undefined && { burst }),
    ...(align !== undefined && { align }),
    ...(timezone !== undefined && { timezone }),
    ...(precision !== undefined && { precision }),
  };
  checkCombination(spec, path, issues);
  return spec;
}
