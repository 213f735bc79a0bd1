import type { KeyLimits } from './key-limits';

/**
 * State of every key of one quota within one shard: a slab of Float64 rows (one per key) and an
 * open-addressing index from the key's 32-bit hash to its row. No object per key: an active key
 * of a one-limit quota costs its key string, `stride` x 8 bytes, and ~16 bytes of index. The hash
 * is the one that already chose the shard, so a lookup is one probe of a dense Int32Array and one
 * row read (a JS Map would add a dependent cache miss). Rows of keys that went idle are reused; the
 * slab and the index shrink when most rows are free, so memory returns to its baseline.
 */
const MIN_ROWS = 16;
const MIN_SLOTS = 32;
const GOLDEN = 0x9e3779b1;
/** Row flag: written since a host last collected it (persistence saves only such rows). */
const CHANGED = 1;
/**
 * Keys remembered as dropped while changed, per table, until a host collects them. Past this (a
 * host that cannot write for a long time), the table says it overflowed and the host resyncs it.
 */
export const MAX_GONE = 1 << 20;

export class KeyTable {
  keys: (string | undefined)[] = [];
  rows: Float64Array;
  private hashes: Uint32Array;
  /** row + 1 per slot; 0 is empty. Load factor stays <= 1/2. */
  private slots = new Int32Array(MIN_SLOTS);
  private shift = 32 - Math.log2(MIN_SLOTS);
  private free: number[] = [];
  private capacity = MIN_ROWS;
  private live = 0;
  /**
   * One byte per row: CHANGED since the last collection. 1 byte a key instead of a second copy of
   * the rows; it follows its row through create, delete, compact and shrink.
   */
  private flags: Uint8Array;
  private changedRows = 0;
  /**
   * Per row, its key's own limits (GoCC's client overrides) or undefined; allocated with the first
   * one, so tables without any cost nothing. A row slot, not a Map by key: a decision on such a key
   * reads it with the row it reads anyway.
   */
  private own: (KeyLimits | undefined)[] | undefined;
  /** Rows with own limits. */
  private owning = 0;
  /** Bumped whenever rows are renumbered (compact, reset): a collection restarts this table. */
  private renumbered = 0;
  /** Set by a host that persists this table: from then on, dropped changed keys are remembered. */
  tracked = false;
  private gone: string[] = [];
  private goneOverflow = false;

  constructor(readonly stride: number) {
    this.rows = new Float64Array(MIN_ROWS * stride);
    this.hashes = new Uint32Array(MIN_ROWS);
    this.flags = new Uint8Array(MIN_ROWS);
  }

  get size(): number {
    return this.live;
  }

  /** Rows whose state changed since their last collection. */
  get changed(): number {
    return this.changedRows;
  }

  /** Changes whenever row numbers change; a cursor taken before sees another value. */
  get epoch(): number {
    return this.renumbered;
  }

  /** Row `row` was written: the next collection takes it. */
  mark(row: number): void {
    if ((this.flags[row]! & CHANGED) !== 0) return;
    this.flags[row]! |= CHANGED;
    this.changedRows++;
  }

  isChanged(row: number): boolean {
    return (this.flags[row]! & CHANGED) !== 0;
  }

  /** The row was collected (or loaded from where it is stored): it is saved as it is. */
  clearMark(row: number): void {
    if ((this.flags[row]! & CHANGED) === 0) return;
    this.flags[row]! &= ~CHANGED;
    this.changedRows--;
  }

  /** The key's own limits held by `row`, if any. */
  ownAt(row: number): KeyLimits | undefined {
    return this.own?.[row];
  }

  setOwn(row: number, extra: KeyLimits | undefined): void {
    if (extra === undefined && this.own === undefined) return;
    this.own ??= [];
    if (this.own[row] === undefined && extra !== undefined) this.owning++;
    else if (this.own[row] !== undefined && extra === undefined) this.owning--;
    this.own[row] = extra;
    if (this.owning === 0) this.own = undefined;
  }

  /** Rows whose key holds its own limits. */
  get withOwn(): number {
    return this.owning;
  }

  /** Every live row changed (a host that must write them all again). */
  markAll(): void {
    for (let row = 0; row < this.keys.length; row++) {
      if (this.keys[row] !== undefined) this.mark(row);
    }
  }

  /** Keys dropped while changed since the last call (their stored copies are out of date). */
  takeGone(): { keys: string[]; overflowed: boolean } {
    const taken = { keys: this.gone, overflowed: this.goneOverflow };
    this.gone = [];
    this.goneOverflow = false;
    return taken;
  }

  /** Remembers `key` as dropped (a host that could not write its removal). */
  forget(key: string): void {
    if (this.gone.length < MAX_GONE) this.gone.push(key);
    else this.goneOverflow = true;
  }

  /**
   * An empty table of another stride (the quota's layout changed) that keeps this one's journal:
   * whether it is tracked, and the keys dropped but not yet collected.
   */
  successor(stride: number): KeyTable {
    const next = new KeyTable(stride);
    next.tracked = this.tracked;
    next.gone = this.gone;
    next.goneOverflow = this.goneOverflow;
    this.gone = [];
    return next;
  }

  /** Slot preference of a hash: its high bits after a multiply, independent of the shard choice. */
  private home(hash: number): number {
    return Math.imul(hash, GOLDEN) >>> this.shift;
  }

  /** Row of `key`, or -1. */
  find(key: string, hash: number): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    for (let i = this.home(hash); ; i = (i + 1) & mask) {
      const r = slots[i]!;
      if (r === 0) return -1;
      if (this.hashes[r - 1] === hash && this.keys[r - 1] === key) return r - 1;
    }
  }

  hashOf(row: number): number {
    return this.hashes[row]!;
  }

  /** Row of a new key (not present), zero-filled: a fresh state for every algorithm. */
  create(key: string, hash: number): number {
    let row = this.free.pop();
    if (row === undefined) {
      row = this.keys.length;
      if (row === this.capacity) this.resizeRows(this.capacity * 2);
      this.keys.push(key);
    } else {
      this.keys[row] = key;
    }
    this.hashes[row] = hash;
    this.flags[row] = CHANGED;
    this.changedRows++;
    this.live++;
    if (this.live * 2 > this.slots.length) this.rebuild(this.slots.length * 2);
    else this.insert(row, hash);
    return row;
  }

  delete(row: number): void {
    const key = this.keys[row];
    if (key === undefined) return;
    this.unlink(row);
    this.keys[row] = undefined;
    this.rows.fill(0, row * this.stride, (row + 1) * this.stride);
    if ((this.flags[row]! & CHANGED) !== 0) {
      // The stored copy (if any) predates the last change: it may count what was since given back.
      this.changedRows--;
      if (this.tracked) this.forget(key);
    }
    this.flags[row] = 0;
    this.setOwn(row, undefined);
    this.free.push(row);
    this.live--;
    if (this.live === 0) this.reset();
    else if (this.slots.length > MIN_SLOTS && this.live * 8 < this.slots.length)
      this.rebuild(this.slots.length / 2);
  }

  /** Moves rows so the slab can shrink; returns old row → new row for those that moved. */
  compact(): Map<number, number> | undefined {
    if (this.capacity <= MIN_ROWS || this.live * 4 > this.capacity) return undefined;
    const moved = new Map<number, number>();
    const stride = this.stride;
    const keys: (string | undefined)[] = [];
    let target = 0;
    for (let row = 0; row < this.keys.length; row++) {
      const key = this.keys[row];
      if (key === undefined) continue;
      if (row !== target) {
        this.rows.copyWithin(target * stride, row * stride, (row + 1) * stride);
        this.hashes[target] = this.hashes[row]!;
        this.flags[target] = this.flags[row]!;
        if (this.own !== undefined) {
          this.own[target] = this.own[row];
          this.own[row] = undefined;
        }
        moved.set(row, target);
      }
      keys.push(key);
      target++;
    }
    if (this.own !== undefined) this.own.length = target;
    // Rows past the last moved one held keys that moved down: a new key there must start at zero.
    this.rows.fill(0, target * stride, this.keys.length * stride);
    this.flags.fill(0, target, this.keys.length);
    this.keys = keys;
    this.free = [];
    this.renumbered++;
    let cap = MIN_ROWS;
    while (cap < this.live * 2) cap *= 2;
    this.resizeRows(cap);
    this.rebuild(this.slots.length);
    return moved;
  }

  private insert(row: number, hash: number): void {
    const slots = this.slots;
    const mask = slots.length - 1;
    let i = this.home(hash);
    while (slots[i] !== 0) i = (i + 1) & mask;
    slots[i] = row + 1;
  }

  /** Removes a row from the index by backward-shift deletion (no tombstones to slow probes). */
  private unlink(row: number): void {
    const slots = this.slots;
    const mask = slots.length - 1;
    let i = this.home(this.hashes[row]!);
    while (slots[i] !== row + 1) i = (i + 1) & mask;
    for (let j = (i + 1) & mask; slots[j] !== 0; j = (j + 1) & mask) {
      const k = this.home(this.hashes[slots[j]! - 1]!);
      // Move slot j back to the hole at i unless its home lies cyclically in (i, j].
      const between = i <= j ? k > i && k <= j : k > i || k <= j;
      if (!between) {
        slots[i] = slots[j]!;
        i = j;
      }
    }
    slots[i] = 0;
  }

  private rebuild(slotCount: number): void {
    this.slots = new Int32Array(slotCount);
    this.shift = 32 - Math.log2(slotCount);
    for (let row = 0; row < this.keys.length; row++) {
      if (this.keys[row] !== undefined) this.insert(row, this.hashes[row]!);
    }
  }

  private reset(): void {
    this.keys = [];
    this.free = [];
    this.capacity = MIN_ROWS;
    this.rows = new Float64Array(MIN_ROWS * this.stride);
    this.hashes = new Uint32Array(MIN_ROWS);
    this.flags = new Uint8Array(MIN_ROWS);
    this.changedRows = 0;
    this.own = undefined;
    this.owning = 0;
    this.renumbered++;
    this.slots = new Int32Array(MIN_SLOTS);
    this.shift = 32 - Math.log2(MIN_SLOTS);
  }

  private resizeRows(capacity: number): void {
    const rows = new Float64Array(capacity * this.stride);
    rows.set(this.rows.subarray(0, Math.min(this.rows.length, rows.length)));
    const hashes = new Uint32Array(capacity);
    hashes.set(this.hashes.subarray(0, Math.min(this.hashes.length, capacity)));
    const flags = new Uint8Array(capacity);
    flags.set(this.flags.subarray(0, Math.min(this.flags.length, capacity)));
    this.rows = rows;
    this.hashes = hashes;
    this.flags = flags;
    this.capacity = capacity;
  }
}
