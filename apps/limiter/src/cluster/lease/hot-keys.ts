/** Counters per (quota, key) hash; a collision only makes a cold key look hot (it leases). */
const SLOTS = 1 << 16;
/** Counts halve this often: a slot holds about half a second of recent decisions. */
export const HOT_PERIOD_MS = 250;

/**
 * Which (quota, key)s this replica decides often enough to lease: a fixed table of counters
 * indexed by the key's hash, halved every HOT_PERIOD_MS, so its memory and its cost per decision
 * stay the same whatever the number of keys.
 */
export class HotKeys {
  private readonly counts = new Int32Array(SLOTS);
  private readonly threshold: number;
  private halvedAt: number;

  /** `rate`: decisions per second of one (quota, key) before it is hot; 0: never. */
  constructor(rate: number, now: number) {
    this.threshold = rate <= 0 ? Infinity : Math.max(1, Math.ceil((rate * HOT_PERIOD_MS) / 1000));
    this.halvedAt = now;
  }

  /** Counts one decision of the key whose hash is `hash`; true when the key is hot. */
  touch(hash: number, now: number): boolean {
    if (this.threshold === Infinity) return false;
    if (now - this.halvedAt >= HOT_PERIOD_MS) this.halve(now);
    const slot = hash & (SLOTS - 1);
    const count = this.counts[slot]! + 1;
    this.counts[slot] = count;
    return count >= this.threshold;
  }

  private halve(now: number): void {
    // Each period past halves once more: a key cold for a second starts from nothing.
    const periods = Math.floor((now - this.halvedAt) / HOT_PERIOD_MS);
    const shift = Math.min(31, periods);
    const c = this.counts;
    for (let i = 0; i < SLOTS; i++) c[i] = c[i]! >> shift;
    this.halvedAt += periods * HOT_PERIOD_MS;
  }
}
