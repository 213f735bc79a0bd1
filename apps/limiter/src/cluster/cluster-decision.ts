import type { NormalisedAcquire } from '@app/contracts';
import { costFor, refusal, type Decision, type KeyStats, type QuotaSpec } from '@app/engine';
import { RedisQuotaStore, type ClusterOutcome, type ClusterQuota } from './redis-quota-store';

/** A cluster quota: its spec and the compiled limits the script is given. */
export interface ClusterQuotaEntry extends ClusterQuota {
  readonly spec: QuotaSpec;
  /** Hot keys take capacity leases (`lease` not off, no concurrency). */
  readonly leasable: boolean;
}

/** COST_EXCEEDS_LIMIT before Redis is asked: such a request can never be admitted. */
export function costTooBig(
  q: ClusterQuotaEntry,
  input: NormalisedAcquire,
  requestId: string,
): Decision | undefined {
  for (const l of q.limits) {
    const c = costFor(input.cost, l.unit);
    if (c <= l.capacity) continue;
    const d = refusal(
      'COST_EXCEEDS_LIMIT',
      requestId,
      input.key,
      q.name,
      `cost.${l.unit}: ${c} exceeds the capacity ${l.capacity} of limit ${l.name}`,
    );
    d.limit = l.capacity;
    d.limitName = l.name;
    return shadowed(q, d);
  }
  return undefined;
}

/** The engine's reply shape for what the script decided; the binding limit as the engine picks it. */
export function decisionOf(
  q: ClusterQuotaEntry,
  input: NormalisedAcquire,
  requestId: string,
  outcome: ClusterOutcome,
): Decision {
  // An admission the caller did not name is named by its receipt, so any replica can release it.
  const id =
    outcome.allowed && input.requestId === undefined && outcome.seq > 0
      ? RedisQuotaStore.admittedId(outcome.seq)
      : requestId;
  const d = refusal(outcome.code, id, input.key, q.name, '');
  d.allowed = outcome.allowed;
  d.reason = undefined;
  if (outcome.allowed && q.concurrency !== undefined && outcome.seq > 0) {
    d.leaseId = RedisQuotaStore.leaseId(outcome.seq);
  }
  let index = outcome.refusing;
  if (index < 0) {
    let least = Infinity;
    q.limits.forEach((l, i) => {
      const share = (l.capacity - outcome.limits[i]!.used) / l.capacity;
      if (share < least) {
        least = share;
        index = i;
      }
    });
  }
  const l = q.limits[index];
  const use = outcome.limits[index];
  if (l !== undefined && use !== undefined) {
    d.limit = l.capacity;
    d.remaining = Math.max(0, l.capacity - use.used);
    d.resetMs = use.resetMs;
    d.limitName = l.name;
  }
  if (!outcome.allowed) {
    d.retryAfterMs = Math.max(1, outcome.retryAfterMs);
    d.reason =
      outcome.code === 'CONCURRENCY_LIMITED'
        ? `concurrency: ${outcome.inFlight} of ${q.concurrency?.max ?? 0} in flight`
        : `limit ${l?.name ?? ''} reached`;
  }
  return shadowed(q, d);
}

/** KeyStats of a cluster key as Redis holds it; `queued` is this replica's waiters. */
export function statsOf(
  q: ClusterQuota,
  key: string,
  outcome: ClusterOutcome,
  queued: number,
): KeyStats {
  return {
    key,
    quota: q.name,
    limits: q.limits.map((l, i) => {
      const use = outcome.limits[i] ?? { used: 0, resetMs: 0 };
      return {
        name: l.name,
        unit: l.unit,
        limit: l.capacity,
        used: use.used,
        remaining: Math.max(0, l.capacity - use.used),
        resetMs: use.resetMs,
      };
    }),
    queued,
    inFlight: outcome.inFlight,
    approved: outcome.approved,
    denied: outcome.denied,
  };
}

/** Shadow quotas decide and count as usual, but always admit; the reply says what would have been. */
export function shadowed(q: ClusterQuotaEntry, d: Decision): Decision {
  if (q.spec.shadow !== true || d.allowed) return d;
  d.reason = `shadow: would be ${d.code} (${d.reason ?? ''})`;
  d.allowed = true;
  d.code = 'OK';
  d.shadow = true;
  return d;
}
