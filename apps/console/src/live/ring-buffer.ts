/**
 * A fixed-capacity FIFO: pushing onto a full buffer overwrites the oldest item, so memory stays
 * bounded however long the page stays open.
 */
export class RingBuffer<T> {
  private readonly items: (T | undefined)[];
  /** Index of the oldest item. */
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    }
    this.items = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  push(item: T): void {
    this.items[(this.head + this.count) % this.capacity] = item;
    if (this.count < this.capacity) this.count++;
    else this.head = (this.head + 1) % this.capacity;
  }

  /** The i-th item, oldest first; undefined out of range. */
  at(index: number): T | undefined {
    if (index < 0 || index >= this.count) return undefined;
    return this.items[(this.head + index) % this.capacity];
  }

  newest(): T | undefined {
    return this.at(this.count - 1);
  }

  /** Drops items from the oldest end while `stale` says so; returns how many it dropped. */
  dropOldestWhile(stale: (item: T) => boolean): number {
    let dropped = 0;
    while (this.count > 0 && stale(this.items[this.head] as T)) {
      this.items[this.head] = undefined; // let the item be collected
      this.head = (this.head + 1) % this.capacity;
      this.count--;
      dropped++;
    }
    return dropped;
  }

  /** One value per item, oldest first. */
  map<U>(pick: (item: T) => U): U[] {
    const out = new Array<U>(this.count);
    for (let i = 0; i < this.count; i++) out[i] = pick(this.at(i) as T);
    return out;
  }

  clear(): void {
    this.items.fill(undefined);
    this.head = 0;
    this.count = 0;
  }
}
