import { isProviderName } from '../providers';
import { DEFAULT_QUOTA_NAME, type QuotaSpec } from '../quota-spec';
import { CONFIG_FIELDS } from './config-fields';
import type { IssueList } from './issues';
import { readQuota, readQuotaOverrides } from './read-quota';
import { fieldValue, refuseUnknownFields, type Mapping } from './readers';

const TOP_LEVEL_FIELDS: ReadonlySet<string> = new Set(CONFIG_FIELDS.file);

export interface NativeConfig {
  readonly quotas: readonly QuotaSpec[];
  readonly providers: readonly string[];
}

function readProviders(value: unknown, issues: IssueList): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    issues.add(['providers'], 'must be a list of provider names, e.g. [openai, anthropic]');
    return [];
  }
  const names = new Set<string>();
  value.forEach((name: unknown, index) => {
    if (typeof name === 'string' && isProviderName(name)) names.add(name);
    else
      issues.add(
        ['providers', index],
        'must be a provider name: a lowercase word [a-z][a-z0-9_-]*',
      );
  });
  return [...names];
}

/** Quota names must be unique, and so must match patterns (else resolution would be ambiguous). */
function checkUnique(
  quotas: readonly QuotaSpec[],
  indexes: readonly number[],
  issues: IssueList,
): void {
  const names = new Map<string, number>();
  const patterns = new Map<string, string>();
  quotas.forEach((quota, position) => {
    const index = indexes[position] ?? position;
    if (names.has(quota.name)) {
      issues.add(['quotas', index, 'name'], `"${quota.name}" is the name of another quota`);
    }
    names.set(quota.name, index);
    if (quota.match === undefined) return;
    const owner = patterns.get(quota.match);
    if (owner !== undefined) {
      issues.add(['quotas', index, 'match'], `is the same pattern as quota "${owner}"`);
    }
    patterns.set(quota.match, quota.name);
  });
}

function readQuotaList(
  value: unknown,
  issues: IssueList,
): { quotas: QuotaSpec[]; indexes: number[] } {
  const quotas: QuotaSpec[] = [];
  const indexes: number[] = [];
  if (value === undefined) return { quotas, indexes };
  if (!Array.isArray(value)) {
    issues.add(['quotas'], 'must be a list of quotas');
    return { quotas, indexes };
  }
  value.forEach((item: unknown, index) => {
    const quota = readQuota(item, ['quotas', index], issues);
    if (quota === undefined) return;
    quotas.push(quota);
    indexes.push(index);
  });
  return { quotas, indexes };
}

/**
 * This project's format. The result always holds the `default` quota: `defaultQuota` with the
 * fields of `defaults:` overriding it, or a complete quota named `default` from `quotas:`.
 */
export function readNativeConfig(
  root: Mapping,
  defaultQuota: QuotaSpec,
  issues: IssueList,
): NativeConfig {
  refuseUnknownFields(root, TOP_LEVEL_FIELDS, [], issues);
  const rawDefaults = fieldValue(root, 'defaults');
  const overrides =
    rawDefaults === undefined ? {} : readQuotaOverrides(rawDefaults, ['defaults'], issues);
  const { quotas, indexes } = readQuotaList(fieldValue(root, 'quotas'), issues);
  checkUnique(quotas, indexes, issues);
  const providers = readProviders(fieldValue(root, 'providers'), issues);

  const listedDefault = quotas.findIndex((quota) => quota.name === DEFAULT_QUOTA_NAME);
  const listed = quotas[listedDefault];
  if (listed === undefined) {
    return { quotas: [{ ...defaultQuota, ...overrides }, ...quotas], providers };
  }
  const index = indexes[listedDefault] ?? listedDefault;
  if (rawDefaults !== undefined) {
    issues.add(
      ['quotas', index, 'name'],
      'the default quota is already set by `defaults:`; keep one',
    );
  }
  if (listed.match !== undefined) {
    issues.add(
      ['quotas', index, 'match'],
      'the default quota serves unmatched keys and takes no match',
    );
  }
  return { quotas: [listed, ...quotas.filter((quota) => quota !== listed)], providers };
}
