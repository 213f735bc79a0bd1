/**
 * The sequence the admin signs into every control entry it writes: it only grows, across keys,
 * deletes and restarts, so a reader can refuse an older write of a key (a replayed entry) by
 * comparing two numbers. It is the admin's clock in microseconds, raised past every sequence seen
 * in the bucket (a clock set back, another admin before this one) and then past the last one given.
 */
export class ControlSequence {
  private last = 0;

  /** The next sequence at `now` (epoch ms). */
  next(now: number): number {
    this.last = Math.max(Math.floor(now) * 1000, this.last + 1);
    return this.last;
  }

  /** A sequence already in the bucket: the next one will be above it. */
  raise(seen: number): void {
    if (seen > this.last) this.last = seen;
  }

  get current(): number {
    return this.last;
  }
}
