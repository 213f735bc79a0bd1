import {
  DEFAULT_QUOTA_NAME,
  formatConfigPath,
  IssueList,
  readQuota,
  type QuotaSpec,
} from '@app/contracts';
import { compileQuota, InvalidQuotaError } from '@app/engine';
import { userInputError, type FieldIssue } from '../graphql/user-input-error';
import type { MatchTakenError } from '../store';
import type { QuotaInput } from './quota.inputs';

/** GraphQL gives null for omitted nullable fields; the config reader wants them absent. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    if (v !== null && v !== undefined) out[k] = withoutNulls(v);
  return out;
}

/**
 * The same rules as a config file's quota (one reader for both), then the engine's own check,
 * so a quota the admin accepts is one every limiter can serve. Throws BAD_USER_INPUT naming
 * each field (`input.limits[0].window`). Whether another quota has the match pattern is the
 * store's check, made in the transaction that writes (see matchTakenIssues).
 */
export function validateQuotaInput(input: QuotaInput): QuotaSpec {
  const issues = new IssueList();
  const spec = readQuota(withoutNulls(input), ['input'], issues);
  const found: FieldIssue[] = issues.all.map((i) => ({
    field: formatConfigPath(i.path),
    message: i.message,
  }));
  if (spec !== undefined && found.length === 0)
    found.push(...quotaIssues(spec, 'input', () => undefined));
  if (spec === undefined || found.length > 0) {
    throw userInputError(
      found.length > 0 ? found : [{ field: 'input', message: 'is not a quota' }],
    );
  }
  return spec;
}

/**
 * What the admin refuses beyond the config reader's rules, for upsertQuota and importConfig
 * alike: no limits, a default quota with a match, a match another quota has (`ownerOf` names
 * that quota), and whatever the engine refuses. `field` is where the quota is (`input`).
 */
export function quotaIssues(
  spec: QuotaSpec,
  field: string,
  ownerOf: (match: string) => string | undefined,
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (spec.limits.length === 0) {
    issues.push({ field: `${field}.limits`, message: 'needs at least one limit' });
  }
  if (spec.name === DEFAULT_QUOTA_NAME && spec.match !== undefined) {
    issues.push({
      field: `${field}.match`,
      message: 'the default quota serves unmatched keys and takes no match',
    });
  }
  const owner = spec.match === undefined ? undefined : ownerOf(spec.match);
  if (owner !== undefined && owner !== spec.name) {
    issues.push({ field: `${field}.match`, message: `is the same pattern as quota "${owner}"` });
  }
  if (issues.length > 0) return issues;
  try {
    compileQuota(spec);
  } catch (error) {
    if (!(error instanceof InvalidQuotaError)) throw error;
    issues.push({ field, message: error.message });
  }
  return issues;
}

/**
 * The store's MatchTakenError as BAD_USER_INPUT issues: `<where(quota)>.match`, or `unknown`
 * alone when only the database's index saw the clash (a writer outside this process).
 */
export function matchTakenIssues(
  error: MatchTakenError,
  where: (quota: string) => string,
  unknown: string,
): FieldIssue[] {
  if (error.conflicts.length === 0) {
    return [
      {
        field: unknown,
        message: 'a match pattern is already the pattern of another quota; nothing was changed',
      },
    ];
  }
  return error.conflicts.map((c) => ({
    field: `${where(c.quota)}.match`,
    message: `is the same pattern as quota "${c.owner ?? '(another)'}"`,
  }));
}
