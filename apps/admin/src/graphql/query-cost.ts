import { TOP_REFUSED_K } from '@app/contracts';
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
 * One quota (or provider, or model) read from SQLite and mapped costs about as much as this many
 * fields resolved: measured 22-27 µs against 2-2.6 µs per field (1 000 quotas, loaded 2-core
 * machine). An element already in memory costs its fields only.
 */
export const STORED_ROW_COST = 10;
/** An audit entry costs more: its before and after are parsed from JSON and written again. */
export const AUDIT_ROW_COST = 40;

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
  // The whole control set is read whatever is selected, plus what the limiters report.
  'Query.quotasInForce': {
    size: (s) => s.quotas + s.providers * s.modelsPerProvider + s.statsQuotas + 1,
    read: STORED_ROW_COST,
  },
  'Query.providers': { size: (s) => s.providers, read: STORED_ROW_COST },
  'Query.auditLog': {
    size: (_, args) => count(args['limit'], DEFAULT_AUDIT_PAGE),
    read: AUDIT_ROW_COST,
  },
  'Quota.limits': { size: (s) => s.limitsPerQuota, read: 0 },
  'QuotaInForce.limits': {
    size: (s) => Math.max(s.limitsPerQuota, PROVIDER_LIMITS),
    read: 0,
  },
  'Provider.models': { size: (s) => s.modelsPerProvider, read: STORED_ROW_COST },
  'StatsUpdate.quotas': { size: (s) => s.statsQuotas, read: 0 },
  'QuotaStats.topRefused': { size: () => TOP_REFUSED_K, read: 0 },
  'KeyStats.limits': { size: (s) => Math.max(s.limitsPerQuota, PROVIDER_LIMITS), read: 0 },
};

/**
 * A root field costs about this many fields more: each one is a SQLite transaction or a round
 * trip to the limiters (measured 5 ms against 2-2.6 µs per field, on the same machine).
 */
export const ROOT_FIELD_COST = 1_000;
const ROOT_TYPES: ReadonlySet<string> = new Set(['Query', 'Mutation', 'Subscription']);

/**
 * The cost of a field: 1 (ROOT_FIELD_COST at the root) plus its fields; a list costs its read
 * and its fields once per element it can answer, so aliases of `quotas` cost the whole store
 * each. The schema's own fields (introspection) cost nothing here: they are bounded by the
 * nesting rule of query-shape.ts.
 */
export function fieldCostEstimator(sizes: ListSizes): ComplexityEstimator {
  return ({ type, field, args, childComplexity }) => {
    if (type.name.startsWith('__') || field.name.startsWith('__')) return 0;
    const own = ROOT_TYPES.has(type.name) ? ROOT_FIELD_COST : 1;
    const list = LIST_COSTS[`${type.name}.${field.name}`];
    if (list === undefined) return own + childComplexity;
    return own + list.size(sizes, args) * (list.read + childComplexity);
  };
}
