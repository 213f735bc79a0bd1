import { InvalidQuotaError } from '../errors';
import { compileQuota, type CompiledQuota } from '../quota/compile';
import type { LimitSpec, QueueSpec, QuotaSpec } from '../types';

/** GoCC drops a limiter unused for 3 windows, and a client's numbers with it. */
const KEPT_WINDOWS = 3;
/** Derived quotas a table shares between keys with the same numbers; past it, a key gets its own. */
const SHARED_PER_TABLE = 64;
/** The most waiters a client may ask a key's queue to hold, unless its quota allows more. */
const MAX_OWN_QUEUE_SIZE = 10_000;

/**
 * A key's own limit and queue size (GoCC's `maxRequests` / `maxRequestsInQueue`), held beside its
 * waiters and leases. The key's row is untouched: its counts are kept and judged against `quota`.
 */
export class KeyLimits {
  constructor(
    /** The table's quota with this key's numbers: every decision on the key uses it. */
    readonly quota: CompiledQuota,
    readonly limit: number | undefined,
    readonly queueSize: number | undefined,
    /** The key's last request: the numbers lapse `KEPT_WINDOWS` windows after it. */
    public lastUsed: number,
  ) {}

  expiresAt(): number {
    return this.lastUsed + KEPT_WINDOWS * (this.quota.limits[0]?.windowMs ?? 0);
  }
}

/** Derived quotas by their numbers, per table; cleared when the table's quota changes. */
export type SharedKeyQuotas = Map<string, CompiledQuota>;

/**
 * `base` with the key's numbers: its first enforced limit set to `limit`, its queue to `queueSize`.
 * Throws InvalidQuotaError (naming `limits` or `queue.maxSize`) when they cannot apply.
 */
export function keyQuota(
  base: CompiledQuota,
  limit: number | undefined,
  queueSize: number | undefined,
  shared: SharedKeyQuotas,
): CompiledQuota {
  const id = `${limit ?? ''}/${queueSize ?? ''}`;
  const known = shared.get(id);
  if (known !== undefined) return known;
  const derived = inLayoutOf(
    base,
    compileQuota(withNumbers(base.name, base.spec, limit, queueSize)),
  );
  derived.table = base.table;
  if (shared.size >= SHARED_PER_TABLE) shared.clear();
  shared.set(id, derived);
  return derived;
}

/**
 * The key's row stays in its quota's layout, so its numbers change what a limit admits, never how
 * its state is kept. Sub-buckets do not depend on the limit. A sliding window exact to the ms keeps
 * a log its quota's limit sized: a key's own limit may lower it, but a log cannot count more
 * admissions than it holds, so a higher one is refused (InvalidQuotaError).
 */
function inLayoutOf(base: CompiledQuota, derived: CompiledQuota): CompiledQuota {
  const limits = derived.limits.map((own, i) => {
    const kept = base.limits[i]!;
    if (own.layoutKey === kept.layoutKey) return own;
    if (kept.logSize > 0 && kept.logUnits && own.limit > kept.logSize) {
      throw new InvalidQuotaError(
        base.name,
        `limits[${i}].limit`,
        `must be at most ${kept.logSize}: the quota's sliding window is exact to the ms, a log of ${kept.logSize} requests; change the quota instead`,
      );
    }
    return { ...kept, limit: own.limit, capacity: own.capacity };
  });
  return { ...derived, limits, stride: base.stride };
}

function withNumbers(
  name: string,
  spec: QuotaSpec,
  limit: number | undefined,
  queueSize: number | undefined,
): QuotaSpec {
  const first = spec.limits.findIndex((l) => l.limit > 0);
  if (limit !== undefined && first < 0) {
    throw new InvalidQuotaError(name, 'limits', 'has no enforced limit to change');
  }
  // 0 would make the limit unlimited: another row layout, not a number of the same limit.
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1)) {
    throw new InvalidQuotaError(name, `limits[${first}].limit`, 'must be an integer >= 1');
  }
  const limits: readonly LimitSpec[] =
    limit === undefined
      ? spec.limits
      : spec.limits.map((l, i) => (i === first ? { ...l, limit } : l));
  if (queueSize === undefined) return { ...spec, limits };
  return { ...spec, limits, queue: queueFor(name, queueSize, spec.queue) };
}

/**
 * A queue of the key's size, bounded by its quota: at most `maxOwnQueueSize` waiters, and each
 * waits no longer than the quota's own `maxWaitMs`, whatever the key's numbers (a client's numbers
 * never hold a caller longer than the operator allows; a quota without a wait takes no queue).
 */
function queueFor(name: string, size: number, own: QueueSpec | undefined): QueueSpec {
  const most = maxOwnQueueSize(own);
  if (!(Number.isSafeInteger(size) && size >= 0 && size <= most)) {
    throw new InvalidQuotaError(name, 'queue.maxSize', `must be an integer 0..${most}`);
  }
  const maxWaitMs = own?.maxWaitMs ?? 0;
  if (size > 0 && maxWaitMs <= 0) {
    throw new InvalidQuotaError(
      name,
      'queue.maxWaitMs',
      'is 0: the quota has no wait for a queue of the key to use; change the quota instead',
    );
  }
  return { maxSize: size, maxWaitMs };
}

/**
 * Waiters a key's own queue may hold: its quota's queue size, or MAX_OWN_QUEUE_SIZE when that is
 * larger. A client may raise the queue (GoCC's `maxRequestsInQueue`), but not to millions of
 * parked callers on one key.
 */
function maxOwnQueueSize(own: QueueSpec | undefined): number {
  return Math.max(own?.maxSize ?? 0, MAX_OWN_QUEUE_SIZE);
}
