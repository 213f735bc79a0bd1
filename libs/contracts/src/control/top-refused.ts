/**
 * The keys a quota refuses most, as limiters count them (a space-saving top-k, Metwally, Agrawal
 * and El Abbadi 2005) and as the admin sums them over the replicas. Pure: no clock, no I/O.
 */

/** Keys counted per quota, and the most a report carries per quota. */
export const TOP_REFUSED_K = 10;
/** Longest key a report carries (the contract's keys are at most 256 bytes, so at most 256 characters). */
export const MAX_TOP_REFUSED_KEY_LENGTH = 256;

/** One of a quota's most refused keys over a report period. */
export interface RefusedKey {
  readonly key: string;
  /** Refusals counted, at most `error` more than the key really had. */
  readonly count: number;
  /** What the key inherited when it took a counter over: its count is at least `count - error`. */
  readonly error: number;
}

interface Counter {
  key: string;
  count: number;
  error: number;
}

/**
 * At most `k` counters. A counted key adds one to its own; a new key takes the smallest counter
 * over, inheriting its count as its error bound. Every key counted more than `n / k` times (n: the
 * refusals offered) is held. O(1) per offer for a known key, O(k) for a new one once full.
 */
export class SpaceSaving {
  private readonly counters = new Map<string, Counter>();
  /** Refusals offered since the last reset. */
  total = 0;

  constructor(readonly k: number = TOP_REFUSED_K) {
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer: ${k}`);
  }

  get size(): number {
    return this.counters.size;
  }

  offer(key: string): void {
    this.total++;
    const mine = this.counters.get(key);
    if (mine !== undefined) {
      mine.count++;
      return;
    }
    if (this.counters.size < this.k) {
      this.counters.set(key, { key, count: 1, error: 0 });
      return;
    }
    let least: Counter | undefined;
    for (const c of this.counters.values())
      if (least === undefined || c.count < least.count) least = c;
    // k >= 1 and the map is full: there is a least counter; it is reused, not reallocated.
    this.counters.delete(least!.key);
    least!.error = least!.count;
    least!.count++;
    least!.key = key;
    this.counters.set(key, least!);
  }

  /** The counters, most counted first (ties by key), as copies. */
  top(): RefusedKey[] {
    return sortTop([...this.counters.values()].map((c) => ({ ...c })));
  }

  reset(): void {
    this.counters.clear();
    this.total = 0;
  }
}

function sortTop(keys: RefusedKey[]): RefusedKey[] {
  return keys.sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Several replicas' lists of one quota as one: counts and error bounds summed per key, the `k`
 * most counted kept. A key missing from a replica's list had at most that list's least count
 * there, which the sum leaves out.
 */
export function mergeTopRefused(
  lists: Iterable<readonly RefusedKey[]>,
  k: number = TOP_REFUSED_K,
): RefusedKey[] {
  const sums = new Map<string, { key: string; count: number; error: number }>();
  for (const list of lists) {
    for (const { key, count, error } of list) {
      const sum = sums.get(key);
      if (sum === undefined) sums.set(key, { key, count, error });
      else {
        sum.count += count;
        sum.error += error;
      }
    }
  }
  return sortTop([...sums.values()]).slice(0, k);
}
