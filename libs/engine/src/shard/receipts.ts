import type { Cost } from '../types';

// One record of 4 float64 per receipt, in a single ring: [seq, chargedAt, keyTag, amount].
// seq < 0 marks a released receipt; keyTag is table * 2^32 + the key's 32-bit hash, so no string
// is retained; amount >= 0 is a plain cost in requests, -1 means the cost object is in `objects`.
const SEQ = 0;
const AT = 1;
const TAG = 2;
const AMOUNT = 3;
const W = 4;
const DEFAULT_COST = -2;

/** A cost that fits in the ring as a number: none, a number, or an object of `requests` only. */
function plainAmount(cost: Cost | undefined): number | undefined {
  if (cost === undefined) return DEFAULT_COST;
  if (typeof cost === 'number') return cost;
  for (const unit in cost) if (unit !== 'requests') return undefined;
  return cost['requests'] ?? DEFAULT_COST;
}

/**
 * What was charged for each admitted request, so release and usage can give it back or settle it.
 * A ring per shard, grown on demand up to `maxCapacity`, cleared after `ttlMs`: bounded memory at
 * any throughput. A receipt that was overwritten or expired is unknown (release answers false).
 */
export class Receipts {
  private capacity = 64;
  private ring = new Float64Array(64 * W).fill(-1);
  private readonly objects = new Map<number, Cost>();
  private next = 0;
  private oldest = 0;

  constructor(
    private readonly maxCapacity: number,
    private readonly ttlMs: number,
  ) {}

  get size(): number {
    return this.next - this.oldest;
  }

  /** The sequence number of the oldest receipt still held; older ones are gone. */
  get oldestSeq(): number {
    return this.oldest;
  }

  add(table: number, keyHash: number, cost: Cost | undefined, chargedAt: number): number {
    if (this.next - this.oldest >= this.capacity) {
      if (this.capacity < this.maxCapacity) this.grow();
      else this.forget(this.oldest++);
    }
    const seq = this.next++;
    const o = (seq & (this.capacity - 1)) * W;
    const r = this.ring;
    r[o + SEQ] = seq;
    r[o + AT] = chargedAt;
    r[o + TAG] = table * 4294967296 + keyHash;
    const amount = plainAmount(cost);
    if (amount !== undefined) {
      r[o + AMOUNT] = amount;
    } else {
      r[o + AMOUNT] = -1;
      this.objects.set(seq, cost!);
    }
    return seq;
  }

  /** Offset of a live, unreleased receipt of (table, key), or -1. */
  find(seq: number, table: number, keyHash: number): number {
    if (!(seq >= this.oldest && seq < this.next)) return -1;
    const o = (seq & (this.capacity - 1)) * W;
    if (this.ring[o + SEQ] !== seq || this.ring[o + TAG] !== table * 4294967296 + keyHash)
      return -1;
    return o;
  }

  costAt(o: number): Cost | undefined {
    const amount = this.ring[o + AMOUNT]!;
    if (amount === DEFAULT_COST) return undefined;
    if (amount >= 0) return amount;
    return this.objects.get(this.ring[o + SEQ]!);
  }

  chargedAtOf(o: number): number {
    return this.ring[o + AT]!;
  }

  setCost(o: number, cost: Cost): void {
    const seq = this.ring[o + SEQ]!;
    const amount = plainAmount(cost);
    if (amount !== undefined) {
      this.objects.delete(seq);
      this.ring[o + AMOUNT] = amount;
    } else {
      this.ring[o + AMOUNT] = -1;
      this.objects.set(seq, cost);
    }
  }

  markReleased(o: number): void {
    this.forget(this.ring[o + SEQ]!);
    this.ring[o + SEQ] = -1;
  }

  /** Drops receipts older than the TTL. */
  sweep(now: number): void {
    const r = this.ring;
    while (this.oldest < this.next) {
      const o = (this.oldest & (this.capacity - 1)) * W;
      if (r[o + SEQ] === this.oldest && r[o + AT]! + this.ttlMs > now) break;
      this.forget(this.oldest);
      r[o + SEQ] = -1;
      this.oldest++;
    }
  }

  /** The clock stepped back to `now`: a receipt charged later was charged at now, no later. */
  stepBack(now: number): void {
    const r = this.ring;
    for (let seq = this.oldest; seq < this.next; seq++) {
      const o = (seq & (this.capacity - 1)) * W;
      if (r[o + SEQ] === seq && r[o + AT]! > now) r[o + AT] = now;
    }
  }

  private forget(seq: number): void {
    if (this.objects.size > 0) this.objects.delete(seq);
  }

  private grow(): void {
    const cap = this.capacity * 2;
    const ring = new Float64Array(cap * W).fill(-1);
    const old = this.ring;
    for (let seq = this.oldest; seq < this.next; seq++) {
      const from = (seq & (this.capacity - 1)) * W;
      const to = (seq & (cap - 1)) * W;
      for (let k = 0; k < W; k++) ring[to + k] = old[from + k]!;
    }
    this.capacity = cap;
    this.ring = ring;
  }
}
