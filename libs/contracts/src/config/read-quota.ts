import { matchPatternProblem } from '../key-match';
import {
  LEASE_MODES,
  SCOPES,
  STORE_FAILURE_POLICIES,
  type ConcurrencySpec,
  type LimitSpec,
  type QueueSpec,
  type QuotaSpec,
} from '../quota-spec';
import type { Writable } from '../writable';
import { CONFIG_FIELDS } from './config-fields';
import { DEFAULT_QUEUE_MAX_WAIT_MS, MAX_QUEUE_WAIT_MS } from './gocc-default';
import type { ConfigPath, IssueList } from './issues';
import { NAME_RULE, readLimit } from './read-limit';
import {
  fieldValue,
  readBoolean,
  readChoice,
  readInteger,
  readMapping,
  readString,
  refuseUnknownFields,
  requireField,
  type Mapping,
} from './readers';

/** A lease outlives any sane request; callers that crash give capacity back after a minute. */
export const DEFAULT_LEASE_TTL_MS = 60_000;

const QUOTA_FIELDS: ReadonlySet<string> = new Set(CONFIG_FIELDS.quota);
const DEFAULTS_FIELDS: ReadonlySet<string> = new Set(CONFIG_FIELDS.defaults);
const QUEUE_FIELDS: ReadonlySet<string> = new Set(CONFIG_FIELDS.queue);
const CONCURRENCY_FIELDS: ReadonlySet<string> = new Set(CONFIG_FIELDS.concurrency);

/** The policy part of a quota: everything but its identity. */
export type QuotaPolicy = Omit<QuotaSpec, 'name' | 'match'>;

function readQueue(value: unknown, path: ConfigPath, issues: IssueList): QueueSpec | undefined {
  const mapping = readMapping(value, path, issues, 'maxSize, maxWaitMs');
  if (mapping === undefined) return undefined;
  refuseUnknownFields(mapping, QUEUE_FIELDS, path, issues);
  requireField(mapping, 'maxSize', path, issues);
  const maxSize = readInteger(mapping, 'maxSize', path, issues, { min: 0 });
  const maxWaitMs = readInteger(mapping, 'maxWaitMs', path, issues, {
    min: 0,
    max: MAX_QUEUE_WAIT_MS,
  });
  return maxSize === undefined
    ? undefined
    : { maxSize, maxWaitMs: maxWaitMs ?? DEFAULT_QUEUE_MAX_WAIT_MS };
}

function readConcurrency(
  value: unknown,
  path: ConfigPath,
  issues: IssueList,
): ConcurrencySpec | undefined {
  const mapping = readMapping(value, path, issues, 'max, leaseTtlMs');
  if (mapping === undefined) return undefined;
  refuseUnknownFields(mapping, CONCURRENCY_FIELDS, path, issues);
  requireField(mapping, 'max', path, issues);
  const max = readInteger(mapping, 'max', path, issues, { min: 1 });
  const leaseTtlMs = readInteger(mapping, 'leaseTtlMs', path, issues, { min: 1 });
  return max === undefined ? undefined : { max, leaseTtlMs: leaseTtlMs ?? DEFAULT_LEASE_TTL_MS };
}

function readLimits(value: unknown, path: ConfigPath, issues: IssueList): LimitSpec[] | undefined {
  if (!Array.isArray(value)) return issues.add(path, 'must be a list of limits');
  const limits: LimitSpec[] = [];
  const names = new Set<string>();
  value.forEach((item: unknown, index) => {
    const limit = readLimit(item, [...path, index], issues);
    if (limit === undefined) return;
    if (names.has(limit.name)) {
      issues.add(
        [...path, index, 'name'],
        `"${limit.name}" is used by another limit of this quota`,
      );
    }
    names.add(limit.name);
    limits.push(limit);
  });
  return limits;
}

/** Reads only the fields present, so `defaults` can override part of the default quota. */
function readPolicy(mapping: Mapping, path: ConfigPath, issues: IssueList): Partial<QuotaPolicy> {
  const policy: Writable<Partial<QuotaPolicy>> = {};
  const limits = fieldValue(mapping, 'limits');
  const queue = fieldValue(mapping, 'queue');
  const concurrency = fieldValue(mapping, 'concurrency');
  if (limits !== undefined) policy.limits = readLimits(limits, [...path, 'limits'], issues);
  if (queue !== undefined) policy.queue = readQueue(queue, [...path, 'queue'], issues);
  if (concurrency !== undefined) {
    policy.concurrency = readConcurrency(concurrency, [...path, 'concurrency'], issues);
  }
  const scope = readChoice(mapping, 'scope', path, issues, SCOPES);
  const onStoreFailure = readChoice(
    mapping,
    'onStoreFailure',
    path,
    issues,
    STORE_FAILURE_POLICIES,
  );
  const lease = readChoice(mapping, 'lease', path, issues, LEASE_MODES);
  const shadow = readBoolean(mapping, 'shadow', path, issues);
  const clientOverrides = readBoolean(mapping, 'clientOverrides', path, issues);
  if (scope !== undefined) policy.scope = scope;
  if (onStoreFailure !== undefined) policy.onStoreFailure = onStoreFailure;
  if (lease !== undefined) policy.lease = lease;
  if (shadow !== undefined) policy.shadow = shadow;
  if (clientOverrides !== undefined) policy.clientOverrides = clientOverrides;
  return policy;
}

/** Drops fields left undefined by a refused read (the file is refused anyway then). */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

function readMatch(mapping: Mapping, path: ConfigPath, issues: IssueList): string | undefined {
  const value = fieldValue(mapping, 'match');
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    return issues.add([...path, 'match'], 'must be a glob with * or re:<regex>');
  }
  const problem = matchPatternProblem(value);
  return problem === undefined ? value : issues.add([...path, 'match'], problem);
}

export function readQuota(
  value: unknown,
  path: ConfigPath,
  issues: IssueList,
): QuotaSpec | undefined {
  const mapping = readMapping(value, path, issues, 'a quota');
  if (mapping === undefined) return undefined;
  refuseUnknownFields(mapping, QUOTA_FIELDS, path, issues);
  requireField(mapping, 'name', path, issues);
  const name = readString(mapping, 'name', path, issues, NAME_RULE);
  const match = readMatch(mapping, path, issues);
  const policy = readPolicy(mapping, path, issues);
  if (name === undefined) return undefined;
  return withoutUndefined({ name, ...(match !== undefined && { match }), limits: [], ...policy });
}

/** `defaults:` of the config file: overrides fields of the default quota, keeps the rest. */
export function readQuotaOverrides(
  value: unknown,
  path: ConfigPath,
  issues: IssueList,
): Partial<QuotaPolicy> | undefined {
  const mapping = readMapping(value, path, issues, 'fields of the default quota');
  if (mapping === undefined) return undefined;
  refuseUnknownFields(mapping, DEFAULTS_FIELDS, path, issues);
  return withoutUndefined(readPolicy(mapping, path, issues));
}
