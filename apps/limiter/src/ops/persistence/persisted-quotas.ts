import type { QuotaSpec } from '@app/contracts';
import type { QuotaSnapshot } from '@app/engine';

/**
 * Windows shorter than this are over by the time a restarted limiter serves again (start-up takes
 * seconds), so persisting them would only cost writes.
 */
export const MIN_PERSISTED_WINDOW_MS = 60_000;

const DAY_MS = 86_400_000;

/**
 * A quota is worth persisting when one of its enforced limits spans a minute or more, or when it
 * has a concurrency cap: leases are held by callers that keep running while the limiter restarts.
 */
export function isPersisted(quota: QuotaSpec): boolean {
  return (
    quota.concurrency !== undefined ||
    quota.limits.some((l) => l.limit > 0 && l.windowMs >= MIN_PERSISTED_WINDOW_MS)
  );
}

/**
 * A stored quota nobody restored (its quota is not configured now) is kept for a while in case the
 * quota comes back (a fixed config file); after its longest window, with a day of margin for
 * calendar days and refills, it holds nothing that could still count.
 */
export function isStale(snapshot: QuotaSnapshot, takenAt: number, now: number): boolean {
  const longest = Math.max(0, ...snapshot.limits.map((l) => l.windowMs));
  const lastLease = Math.max(0, ...snapshot.leases.map((l) => l.expiresAt));
  return now > Math.max(takenAt + longest + DAY_MS, lastLease);
}

/** The shape restore needs; anything else in the database is refused rather than half-loaded. */
export function parseQuotaSnapshot(json: string): QuotaSnapshot | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const s = value as Partial<Record<keyof QuotaSnapshot, unknown>> | null;
  if (
    s === null ||
    typeof s !== 'object' ||
    typeof s.name !== 'string' ||
    typeof s.stride !== 'number' ||
    !Array.isArray(s.limits) ||
    !Array.isArray(s.keys) ||
    !Array.isArray(s.rows) ||
    !Array.isArray(s.leases)
  ) {
    return undefined;
  }
  return value as QuotaSnapshot;
}
