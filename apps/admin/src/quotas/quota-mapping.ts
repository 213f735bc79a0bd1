import { formatDuration, type ControlQuota, type LimitSpec } from '@app/contracts';
import {
  LeaseMode,
  Scope,
  type Algorithm,
  type Align,
  type Limit,
  type Quota,
  type StoreFailurePolicy,
} from './quota.types';

/** One limit as GraphQL shows it. */
export function toLimit(l: LimitSpec): Limit {
  return {
    name: l.name,
    unit: l.unit,
    limit: l.limit,
    windowMs: l.windowMs,
    // The input's own spelling: window given back to setQuota means the same windowMs.
    window: formatDuration(l.windowMs),
    algorithm: l.algorithm as Algorithm,
    burst: l.burst,
    align: l.align as Align | undefined,
    timezone: l.timezone,
    precision: l.precision,
  };
}

/** The stored quota as GraphQL shows it; omitted policy fields show their defaults. */
export function toQuota(q: ControlQuota): Quota {
  const { spec } = q;
  return {
    name: spec.name,
    match: spec.match,
    limits: spec.limits.map(toLimit),
    queue: spec.queue,
    concurrency: spec.concurrency,
    scope: (spec.scope ?? Scope.local) as Scope,
    onStoreFailure: spec.onStoreFailure as StoreFailurePolicy | undefined,
    lease: (spec.lease ?? LeaseMode.auto) as LeaseMode,
    shadow: spec.shadow ?? false,
    clientOverrides: spec.clientOverrides ?? false,
    version: q.version,
    updatedAt: new Date(q.updatedAt),
  };
}
