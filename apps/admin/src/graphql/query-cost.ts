import type { ComplexityEstimator } from 'graphql-query-complexity';

/** How many elements each list of objects can hold at most, now (see ListSizesService). */
export interface ListSizes {
  readonly quotas: number;
  readonly limitsPerQuota: number;
  readonly providers: number;
  readonly modelsPerProvider: number;
  /** Quotas the limiters report stats for. */
  readonly statsQuotas: number;
}

/**
 * One row read from SQLite and mapped costs about as much as this many fields resolved
 * (`npm run bench:admin` prints both); an element that is already in memory costs nothing more
 * than its fields.
 */
export const STORED_ROW_COST = 3;

/** auditLog's page when `limit` is not given. */
export const DEFAULT_AUDIT_PAGE = 100;

/** A provider model's rpm, tpm and rpd: the limiters' own config quotas are not known here. */
const PROVIDER_LIMITS = 3;

interface ListCost {
  /** How many elements the field can answer, given its arguments. */
  readonly size: (sizes: ListSizes, args: Readonly<Record<string, unknown>>) => number;
  /** What each element costs besides its fields. */
  readonly read: number;
}

const count = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : fallback;

/** Every list of objects in the schema, by `Type.field` (a test checks that none is missing). */
export const LIST_COSTS: Readonly<Record<string, ListCost>> = {
  'Query.quotas': {
    size: (s, args) => Math.min(s.quotas, count(args['first'], s.quotas)),
    read: STORED_ROW_COST,
  },
  'Query.providers': { size: (s) => s.providers, read: STORED_ROW_COST },
  'Query.auditLog': {
    size: (_, args) => count(args['limit'], DEFAULT_AUDIT_PAGE),
    read: STORED_ROW_COST,
  },
  'Quota.limits': { size: (s) => s.limitsPerQuota, read: 0 },
  'Provider.models': { size: (s) => s.modelsPerProvider, read: STORED_ROW_COST },
  'StatsUpdate.quotas': { size: (s) => s.statsQuotas, read: 0 },
  'KeyStats.limits': { size: (s) => Math.max(s.limitsPerQuota, PROVIDER_LIMITS), read: 0 },
};

/**
 * A list field costs 1, plus for every element it can answer its read and its fields: aliases
 * of `quotas` cost the whole store each. The schema's own fields (introspection) cost nothing
 * here: they are bounded by the nesting rule of query-limits.ts. Other fields are left to the
 * next estimator (1 plus their fields).
 */
export function listCostEstimator(sizes: ListSizes): ComplexityEstimator {
  return ({ type, field, args, childComplexity }) => {
    if (type.name.startsWith('__') || field.name.startsWith('__')) return 0;
    const cost = LIST_COSTS[`${type.name}.${field.name}`];
    if (cost === undefined) return undefined;
    return 1 + cost.size(sizes, args) * (cost.read + childComplexity);
  };
}
