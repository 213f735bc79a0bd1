/**
 * Quota policy shapes of docs/contract.md, Concepts, as the config file and provider profiles
 * produce them. They mirror the engine's types field for field (checked at compile time in
 * messages/engine-compat.ts), so contracts never needs the engine at run time.
 */

export const ALGORITHMS = ['fixed_window', 'sliding_window', 'token_bucket'] as const;
export type AlgorithmName = (typeof ALGORITHMS)[number];

export const SCOPES = ['local', 'cluster'] as const;
export type Scope = (typeof SCOPES)[number];

export const STORE_FAILURE_POLICIES = ['closed', 'open', 'local'] as const;
export type StoreFailurePolicy = (typeof STORE_FAILURE_POLICIES)[number];

/** `auto`: a hot key's capacity is leased from Redis in slices; `off`: one Redis call a decision. */
export const LEASE_MODES = ['auto', 'off'] as const;
export type LeaseMode = (typeof LEASE_MODES)[number];

export interface LimitSpec {
  readonly name: string;
  /** `requests`, `tokens` or any other lowercase word. */
  readonly unit: string;
  /** Capacity per window; 0 means unlimited and the limit is skipped. */
  readonly limit: number;
  readonly windowMs: number;
  readonly algorithm: AlgorithmName;
  /** token_bucket only: capacity, default `limit`. */
  readonly burst?: number;
  /** Windows of whole days that reset at midnight in `timezone` (IANA, default UTC). */
  readonly align?: 'calendar';
  readonly timezone?: string;
  /** sliding_window only: sub-buckets per window, 1..120 (default 10), of a limit too large to log. */
  readonly precision?: number;
}

export interface QueueSpec {
  readonly maxSize: number;
  readonly maxWaitMs: number;
}

export interface ConcurrencySpec {
  readonly max: number;
  readonly leaseTtlMs: number;
}

export interface QuotaSpec {
  readonly name: string;
  /** Glob with `*`, or `re:<regex>`. */
  readonly match?: string;
  readonly limits: readonly LimitSpec[];
  readonly queue?: QueueSpec;
  readonly concurrency?: ConcurrencySpec;
  readonly scope?: Scope;
  readonly onStoreFailure?: StoreFailurePolicy;
  /** Cluster scope: capacity leases for hot keys (default `auto`); concurrency is never leased. */
  readonly lease?: LeaseMode;
  readonly shadow?: boolean;
  /**
   * Clients may give a key its own limit and queue size (GoCC's `maxRequests`,
   * `maxRequestsInQueue`). Default false; GoCC's quotas (the `default` quota from the GoCC
   * variables, a GoCC file's) set it; provider models never do.
   */
  readonly clientOverrides?: boolean;
  /**
   * Only from a GoCC file (gocc-config.ts), never written in a config: entries that match one key
   * merge in file order. Each field names the entry it comes from (the engine's QuotaSpec.merge).
   */
  readonly merge?: Readonly<Record<string, string>>;
}

/** The quota that serves keys no other quota claims. */
export const DEFAULT_QUOTA_NAME = 'default';

export const MS_PER_DAY = 86_400_000;
