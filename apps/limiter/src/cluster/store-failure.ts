import type { NormalisedAcquire } from '@app/contracts';
import {
  refusal,
  type Decision,
  type Outcome,
  type QuotaSpec,
  type StoreFailurePolicy,
} from '@app/engine';
import type { StoreFailureAnswer } from './cluster-scope';
import type { DecisionOp } from './redis-quota-store';

/**
 * The policy when a quota sets none. `local` keeps limiting (each replica its share) rather than
 * refusing everything (`closed`) or admitting everything (`open`) while Redis is away.
 */
export const DEFAULT_STORE_FAILURE: StoreFailurePolicy = 'local';

/** A cluster quota as the engine holds it for `onStoreFailure: local`: limit / replicas, >= 1. */
export function localFallback(q: QuotaSpec, replicas: number): QuotaSpec {
  if (q.scope !== 'cluster' || replicas <= 1) return q;
  const share = (n: number): number => Math.max(1, Math.floor(n / replicas));
  return {
    ...q,
    limits: q.limits.map((l) => ({
      ...l,
      ...(l.limit > 0 && { limit: share(l.limit) }),
      ...(l.burst !== undefined && l.burst > 0 && { burst: share(l.burst) }),
    })),
    ...(q.concurrency !== undefined && {
      concurrency: { ...q.concurrency, max: share(q.concurrency.max) },
    }),
  };
}

/** Answers a request Redis could not decide, as its quota's onStoreFailure says. */
export function storeFailureAnswer(
  local: (input: NormalisedAcquire, op: DecisionOp) => Decision | Promise<Decision>,
): StoreFailureAnswer {
  return (q, input, requestId, op) => {
    const policy = q.onStoreFailure ?? DEFAULT_STORE_FAILURE;
    switch (policy) {
      case 'local':
        return local(input, op);
      case 'open': {
        const d = refusal(
          'OK',
          requestId,
          input.key,
          q.name,
          'store unavailable; admitted (onStoreFailure: open)',
        );
        d.allowed = true;
        return d;
      }
      case 'closed': {
        const d = refusal(
          'UNAVAILABLE',
          requestId,
          input.key,
          q.name,
          'store unavailable (onStoreFailure: closed)',
        );
        d.retryAfterMs = 1000;
        return d;
      }
    }
  };
}

/**
 * A release, usage, stats or reset of a cluster key: Redis's answer, or when Redis could not
 * answer (undefined), the replica's own share under `local`, else UNAVAILABLE so that the caller
 * knows nothing was recorded.
 */
export function keyOp<T>(q: QuotaSpec, value: T | undefined, local: () => Outcome<T>): Outcome<T> {
  if (value !== undefined) return { ok: true, value };
  const policy = q.onStoreFailure ?? DEFAULT_STORE_FAILURE;
  if (policy === 'local') return local();
  return {
    ok: false,
    code: 'UNAVAILABLE',
    reason: `store unavailable (onStoreFailure: ${policy})`,
  };
}
