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
 * Until when a quota stored in the old format (one snapshot per quota, schema 1) may still count:
 * its longest window after the snapshot, with a day of margin for calendar days and refills, and
 * its last lease.
 */
export function storedUntil(snapshot: QuotaSnapshot, takenAt: number): number {
  const longest = snapshot.limits.reduce((at, l) => Math.max(at, l.windowMs), 0);
  // A loop, not a spread: a quota may hold a million leases.
  const lastLease = snapshot.leases.reduce((at, l) => Math.max(at, l.expiresAt), 0);
  return Math.max(takenAt + longest + DAY_MS, lastLease);
}

/** A snapshot of the old format, as migration reads it; anything else is refused, not half-read. */
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
