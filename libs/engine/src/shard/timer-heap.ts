/**
 * One timer structure per shard: a binary min-heap of (instant, table, row) in typed arrays,
 * 16 bytes an entry. Keys never own timers; a key is examined when its entry comes due, and the
 * examination schedules the next one. Entries that went stale (the key was rescheduled earlier or
 * deleted) are recognised by the owner and skipped.
 */
export class TimerHeap {
  private at = new Float64Array(64);
  private table = new Int32Array(64);
  private row = new Int32Array(64);
  private n = 0;

  get size(): number {
    return this.n;
  }

  peekAt(): number {
    return this.n > 0 ? this.at[0]! : Infinity;
  }

  peekTable(): number {
    return this.table[0]!;
  }

  peekRow(): number {
    return this.row[0]!;
  }

  push(at: number, table: number, row: number): void {
    if (this.n === this.at.length) this.resize(this.n * 2);
    let i = this.n++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.at[parent]! <= at) break;
      this.move(parent, i);
      i = parent;
    }
    this.at[i] = at;
    this.table[i] = table;
    this.row[i] = row;
  }

  pop(): void {
    const last = --this.n;
    if (last <= 0) {
      this.n = Math.max(0, last);
      this.maybeShrink();
      return;
    }
    const at = this.at[last]!;
    const table = this.table[last]!;
    const row = this.row[last]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= last) break;
      if (child + 1 < last && this.at[child + 1]! < this.at[child]!) child++;
      if (this.at[child]! >= at) break;
      this.move(child, i);
      i = child;
    }
    this.at[i] = at;
    this.table[i] = table;
    this.row[i] = row;
    this.maybeShrink();
  }

  /** Every entry due after `now` becomes due at `now` (a clock that stepped back); order holds. */
  dueBy(now: number): void {
    for (let i = 0; i < this.n; i++) if (this.at[i]! > now) this.at[i] = now;
  }

  /** Rewrites row numbers after a table compaction. */
  remap(table: number, moved: ReadonlyMap<number, number>): void {
    for (let i = 0; i < this.n; i++) {
      if (this.table[i] === table) {
        const to = moved.get(this.row[i]!);
        if (to !== undefined) this.row[i] = to;
      }
    }
  }

  private move(from: number, to: number): void {
    this.at[to] = this.at[from]!;
    this.table[to] = this.table[from]!;
    this.row[to] = this.row[from]!;
  }

  private maybeShrink(): void {
    if (this.at.length > 64 && this.n * 4 < this.at.length) this.resize(this.at.length >> 1);
  }

  private resize(capacity: number): void {
    const at = new Float64Array(capacity);
    const table = new Int32Array(capacity);
    const row = new Int32Array(capacity);
    at.set(this.at.subarray(0, this.n));
    table.set(this.table.subarray(0, this.n));
    row.set(this.row.subarray(0, this.n));
    this.at = at;
    this.table = table;
    this.row = row;
  }
}
