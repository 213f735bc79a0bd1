import { InvalidQuotaError } from '../errors';
import { compileQuota, type CompiledQuota } from '../quota/compile';
import type { LimitSpec, QueueSpec, QuotaSpec } from '../types';

/** GoCC drops a limiter unused for 3 windows, and a client's numbers with it. */
const KEPT_WINDOWS = 3;
/** Derived quotas a table shares between keys with the same numbers; past it, a key gets its own. */
const SHARED_PER_TABLE = 64;

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
  const size = queueSize ?? spec.queue?.maxSize;
  if (size === undefined) return { ...spec, limits };
  const enforced = limits[first];
  return { ...spec, limits, queue: queueFor(size, spec.queue, enforced) };
}

/**
 * A queue the key's numbers size: its waiters may wait as long as the quota lets them, and at
 * least as long as the full queue takes to drain at the key's limit, plus the window in progress
 * (as the default quota's wait is made), so a smaller limit never times out a waiter GoCC serves.
 */
function queueFor(
  size: number,
  own: QueueSpec | undefined,
  limit: LimitSpec | undefined,
): QueueSpec {
  const drainMs =
    limit === undefined || size === 0
      ? 0
      : Math.min((Math.ceil(size / limit.limit) + 1) * limit.windowMs, Number.MAX_SAFE_INTEGER);
  return { maxSize: size, maxWaitMs: Math.max(own?.maxWaitMs ?? 0, drainMs) };
}
