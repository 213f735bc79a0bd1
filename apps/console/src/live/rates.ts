/**
 * Rates from the admin's counters. `approved` and `denied` count since each limiter replica
 * started, summed over the replicas reporting, so a rate is the difference of two readings over
 * the time between them.
 *
 * The sum also moves when a replica joins, leaves or restarts; that is not traffic. So a rate is
 * unknown (null, a gap in the chart, "—" in the figures) rather than wrong when:
 * - there is no earlier reading, or the readings are not in time order;
 * - the number of replicas reporting changed between the readings;
 * - either counter went down (a replica restarted or stopped reporting): never a negative rate;
 * - the readings are less than MIN_RATE_INTERVAL_MS apart (the first update after subscribing
 *   comes at once, the next on the admin's timer): limiters report every 500 ms, so so short a
 *   difference says more about when they reported than about traffic. The caller then keeps the
 *   earlier reading as the base for the next rate (see measuredFrom).
 */
export interface CounterReading {
  /** When the admin computed it, epoch ms (its clock, the same for every reading). */
  readonly atMs: number;
  readonly replicas: number;
  readonly approved: number;
  readonly denied: number;
}

export interface Rates {
  /** Admitted per second, null when unknown. */
  readonly admitted: number | null;
  /** Refused per second, null when unknown. */
  readonly refused: number | null;
}

/** Limiters report their counters every 500 ms: no rate over less than that. */
export const MIN_RATE_INTERVAL_MS = 500;

export const UNKNOWN_RATES: Rates = { admitted: null, refused: null };

export function ratesBetween(previous: CounterReading | undefined, next: CounterReading): Rates {
  if (previous === undefined) return UNKNOWN_RATES;
  const seconds = (next.atMs - previous.atMs) / 1000;
  if (!(seconds * 1000 >= MIN_RATE_INTERVAL_MS) || !Number.isFinite(seconds)) return UNKNOWN_RATES;
  if (previous.replicas !== next.replicas) return UNKNOWN_RATES;
  const admitted = next.approved - previous.approved;
  const refused = next.denied - previous.denied;
  if (!(admitted >= 0) || !(refused >= 0)) return UNKNOWN_RATES;
  return { admitted: admitted / seconds, refused: refused / seconds };
}

/**
 * The reading the next rate should be measured from: `next`, unless it came too soon after
 * `previous` to give one, in which case `previous` stays the base.
 */
export function measuredFrom(
  previous: CounterReading | undefined,
  next: CounterReading,
): CounterReading {
  if (previous === undefined) return next;
  const elapsed = next.atMs - previous.atMs;
  return elapsed >= 0 && elapsed < MIN_RATE_INTERVAL_MS ? previous : next;
}
