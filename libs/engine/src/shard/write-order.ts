/**
 * The order in which a Map's keys were last written, kept beside it: the oldest key without
 * iterating the Map. A V8 Map deletes by leaving a hole that stays until the table is rebuilt, so
 * a Map used as a FIFO (delete the first key, add one at the end) makes `keys().next()` walk over
 * up to its capacity in holes: at the idempotency bound (16 384 per shard) that walk was a tenth of
 * a limiter's CPU under requests that each carry a new requestId.
 *
 * Each write is queued with a stamp; a key written again leaves its older queue entry stale, and
 * stale entries are skipped when they come up (the owner says which stamp is current).
 */
export class WriteOrder {
  private keys: string[] = [];
  private stamps: number[] = [];
  private head = 0;

  /** Records a write of `key` stamped `stamp` (stamps of one key grow with each write). */
  push(key: string, stamp: number): void {
    this.keys.push(key);
    this.stamps.push(stamp);
  }

  /** Removes and returns the oldest key whose entry is current (`isCurrent`), if any. */
  shift(isCurrent: (key: string, stamp: number) => boolean): string | undefined {
    let found: string | undefined;
    while (found === undefined && this.head < this.keys.length) {
      const key = this.keys[this.head]!;
      if (isCurrent(key, this.stamps[this.head]!)) found = key;
      this.head++;
    }
    this.compact();
    return found;
  }

  /**
   * Drops entries oldest first: stale ones, and current ones while `evict` (which removes the key
   * from the owner's map) says it took them; stops at the first current one it refuses.
   */
  evictWhile(
    isCurrent: (key: string, stamp: number) => boolean,
    evict: (key: string, stamp: number) => boolean,
  ): void {
    while (this.head < this.keys.length) {
      const key = this.keys[this.head]!;
      const stamp = this.stamps[this.head]!;
      if (isCurrent(key, stamp) && !evict(key, stamp)) break;
      this.head++;
    }
    this.compact();
  }

  // Drops the consumed front once it is half the arrays: amortised O(1) per write.
  private compact(): void {
    if (this.head < 1024 || this.head * 2 < this.keys.length) return;
    this.keys = this.keys.slice(this.head);
    this.stamps = this.stamps.slice(this.head);
    this.head = 0;
  }
}
