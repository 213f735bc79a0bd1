/**
 * Public shapes of the engine. They mirror docs/contract.md (Concepts, Messages); transports map
 * them to wire.
 */

export type AlgorithmName = 'fixed_window' | 'sliding_window' | 'token_bucket';

export interface LimitSpec {
  readonly name: string;
  /** `requests`, `tokens` or any other lowercase word. */
  readonly unit: string;
  /** Capacity per window; 0 means unlimited and the limit is skipped. */
  readonly limit: number;
  readonly windowMs: number;
  readonly algorithm: AlgorithmName;
  /** token_bucket only: bucket capacity, default `limit`. */
  readonly burst?: number;
  /** `calendar`: windows of whole days reset at midnight in `timezone` (IANA, default UTC). */
  readonly align?: 'calendar';
  readonly timezone?: string;
  /**
   * sliding_window only: sub-buckets per window (1..120, default 10) of a limit too large for an
   * exact log (compile.ts); more is finer and costs 8 bytes each.
   */
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

export type Scope = 'local' | 'cluster';
export type StoreFailurePolicy = 'closed' | 'open' | 'local';
export type LeaseMode = 'auto' | 'off';

export interface QuotaSpec {
  readonly name: string;
  /** Glob with `*`, or `re:<regex>`; chooses this quota for keys when the request names none. */
  readonly match?: string;
  readonly limits: readonly LimitSpec[];
  readonly queue?: QueueSpec;
  readonly concurrency?: ConcurrencySpec;
  readonly scope?: Scope;
  readonly onStoreFailure?: StoreFailurePolicy;
  /** Cluster scope: a hot key's capacity leased from Redis in slices (default `auto`), or `off`. */
  readonly lease?: LeaseMode;
  readonly shadow?: boolean;
  /**
   * May a client give a key of this quota its own limit and queue size (GoCC's `maxRequests`,
   * `maxRequestsInQueue`; Engine.setKeyLimits)? Default false: the operator's numbers hold.
   */
  readonly clientOverrides?: boolean;
  /**
   * GoCC's config entries, which merge in file order. On a quota with `match` (an entry): each
   * field the entry sets, naming this quota. On a quota without (a merge): each field, naming the
   * entry it comes from. A key that several entries match is decided by the quota whose `merge`
   * equals their records laid over each other in definition order, the later entry winning a field.
   */
  readonly merge?: Readonly<Record<string, string>>;
}

/** Cost per unit. A plain number is a cost in `requests`. */
export type Cost = number | Readonly<Record<string, number>>;

export interface AcquireInput {
  readonly key: string;
  readonly quota?: string;
  readonly cost?: Cost;
  readonly wait?: boolean;
  readonly maxWaitMs?: number;
  readonly requestId?: string;
  /** Epoch ms after which the request must not be admitted. */
  readonly deadline?: number;
}

export type DecisionCode =
  | 'OK'
  | 'RATE_LIMITED'
  | 'QUEUE_FULL'
  | 'WAIT_TIMEOUT'
  | 'CONCURRENCY_LIMITED'
  | 'COST_EXCEEDS_LIMIT'
  | 'UNKNOWN_QUOTA'
  | 'INVALID_REQUEST'
  | 'UNAVAILABLE';

/** The AcquireReply of the contract. */
export interface Decision {
  allowed: boolean;
  code: DecisionCode;
  requestId: string;
  key: string;
  quota: string;
  /** The binding limit: least remaining relative to its size, or the one that refused. */
  limit: number;
  remaining: number;
  resetMs: number;
  retryAfterMs: number;
  waitedMs: number;
  limitName: string;
  leaseId?: string;
  shadow: boolean;
  reason?: string;
}

export interface ReleaseInput {
  readonly key: string;
  readonly quota?: string;
  readonly requestId?: string;
  readonly leaseId?: string;
}

export interface UsageInput {
  readonly key: string;
  readonly quota?: string;
  readonly requestId?: string;
  readonly cost: Cost;
}

export interface StatsInput {
  readonly key: string;
  readonly quota?: string;
}

/**
 * GoCC's `maxRequests` / `maxRequestsInQueue`: the key's own limit (its quota's first enforced
 * limit) and queue size, changed in place. An absent field keeps what the key has.
 */
export interface KeyLimitsInput {
  readonly key: string;
  readonly quota?: string;
  readonly limit?: number;
  readonly queueSize?: number;
}

/** The limits in force for one key: its quota's, or the key's own (`own`). */
export interface KeyLimitsView {
  readonly spec: QuotaSpec;
  readonly own: boolean;
}

export interface LimitStats {
  name: string;
  unit: string;
  limit: number;
  used: number;
  remaining: number;
  resetMs: number;
}

export interface KeyStats {
  key: string;
  quota: string;
  limits: LimitStats[];
  queued: number;
  inFlight: number;
  /** In the current window of the first limit. */
  approved: number;
  denied: number;
  /** Where the counts live; the engine's are always this process's, the host says which scope. */
  scope?: Scope;
}
