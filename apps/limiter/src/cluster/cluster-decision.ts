import type { NormalisedAcquire } from '@app/contracts';
import { costFor, refusal, type Decision, type QuotaSpec } from '@app/engine';
import type { ClusterOutcome, ClusterQuota } from './redis-quota-store';

/** A cluster quota: its spec and the compiled limits the script is given. */
export interface ClusterQuotaEntry extends ClusterQuota {
  readonly spec: QuotaSpec;
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
  const d = refusal(outcome.allowed ? 'OK' : 'RATE_LIMITED', requestId, input.key, q.name, '');
  d.allowed = outcome.allowed;
  d.reason = undefined;
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
    d.reason = l === undefined ? 'requests are waiting ahead' : `limit ${l.name} reached`;
  }
  return shadowed(q, d);
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
