import { SnapshotError } from './errors';
import type { CompiledLimit } from './algorithms';
import {
  compileStoredQuota,
  storedLimits,
  type CompiledQuota,
  type StoredLimitSpec,
} from './quota/compile';
import { rowIdleAt } from './shard/idle';
import type { Shard, TableState } from './shard/shard';
import { storedRowProblem } from './shard/stored-row';

/**
 * Per-key persistence without a second copy of the keys: every row carries a "changed since its
 * last collection" mark (KeyTable), set wherever a shard writes the row. A host collects the
 * changed rows of the quotas it persists in bounded slices (`collectChanged`), and loads stored
 * rows back one key at a time (`restoreStoredKey`). Pure: no I/O, `now` is a parameter.
 */

/** Where a pass over the changed rows stands. Opaque: pass back what `collectChanged` returned. */
export interface ChangeCursor {
  readonly shard: number;
  readonly table: number;
  readonly row: number;
  /** The table `row` belongs to and its epoch: a table renumbered since is scanned again. */
  readonly keys: object;
  readonly epoch: number;
}

/** A concurrency lease of a collected row (its key is the row's). */
export interface StoredLease {
  readonly id: string;
  readonly requestId: string;
  readonly expiresAt: number;
}

/** A quota as its collected rows are laid out. */
export interface ChangedQuota {
  readonly name: string;
  /** The enforced limits, in row order (what `storedLayout` takes back; sliding logs marked). */
  readonly limits: readonly StoredLimitSpec[];
  readonly stride: number;
}

/** One slice of changed rows, column by column (row i is entry i of every per-row array). */
export interface ChangedRows {
  readonly quotas: ChangedQuota[];
  /** Per row: its quota, an index into `quotas`. */
  readonly quota: number[];
  readonly keys: string[];
  /** Per row: from when the row (its leases included) holds nothing that still counts. */
  readonly idleAt: number[];
  /** Per row: its live leases, or undefined. */
  readonly leases: (StoredLease[] | undefined)[];
  /** The rows' numbers one after the other, `quotas[quota[i]].stride` of them each. */
  readonly state: Float64Array;
  /** Keys dropped while changed: a stored copy of them is out of date and must go. */
  readonly gone: { readonly quota: string; readonly keys: string[] }[];
  /** Quotas that dropped more changed keys than a table remembers: store them whole again. */
  readonly overflowed: string[];
}

/** Rows scanned per call at most, changed or not, so a call is bounded whatever the table size. */
const SCAN_PER_ROW = 16;
const MIN_SCAN = 65_536;

class Collector {
  readonly quotas: ChangedQuota[] = [];
  readonly quota: number[] = [];
  readonly keys: string[] = [];
  readonly idleAt: number[] = [];
  readonly leases: (StoredLease[] | undefined)[] = [];
  readonly gone: { quota: string; keys: string[] }[] = [];
  readonly overflowed: string[] = [];
  private state = new Float64Array(1024);
  private length = 0;
  private readonly indexOf = new Map<CompiledQuota, number>();

  constructor(private readonly now: number) {}

  add(t: TableState, row: number): void {
    const q = t.quota;
    let index = this.indexOf.get(q);
    if (index === undefined) {
      index = this.quotas.length;
      this.indexOf.set(q, index);
      this.quotas.push({
        name: q.name,
        limits: storedLimits(q),
        stride: q.stride,
      });
    }
    const key = t.keys.keys[row]!;
    const base = row * q.stride;
    if (this.length + q.stride > this.state.length) {
      const grown = new Float64Array(Math.max(this.state.length * 2, this.length + q.stride));
      grown.set(this.state.subarray(0, this.length));
      this.state = grown;
    }
    this.state.set(t.keys.rows.subarray(base, base + q.stride), this.length);
    this.length += q.stride;
    let idle = rowIdleAt(q, t.keys.rows, base);
    let leases: StoredLease[] | undefined;
    const held = t.extras.size === 0 ? undefined : t.extras.get(key)?.leases;
    if (held !== undefined) {
      for (const l of held.values()) {
        if (l.expiresAt <= this.now) continue;
        (leases ??= []).push({ id: l.id, requestId: l.requestId, expiresAt: l.expiresAt });
        idle = Math.max(idle, l.expiresAt);
      }
    }
    this.quota.push(index);
    this.keys.push(key);
    this.idleAt.push(idle);
    this.leases.push(leases);
  }

  result(): ChangedRows {
    return {
      quotas: this.quotas,
      quota: this.quota,
      keys: this.keys,
      idleAt: this.idleAt,
      leases: this.leases,
      state: this.state.slice(0, this.length),
      gone: this.gone,
      overflowed: this.overflowed,
    };
  }
}

/**
 * Copies at most `maxRows` changed rows of the quotas `include` picks into a new slice and clears
 * their marks; resumes at `from`. `next` is undefined once every table was passed. A row changed
 * again after it was collected is taken by the next pass; a table whose rows were renumbered
 * between two calls (compaction) is scanned again from its first row.
 */
export function collectChanged(
  shards: readonly Shard[],
  include: (quota: string) => boolean,
  maxRows: number,
  now: number,
  from: ChangeCursor | undefined,
): { rows: ChangedRows; next: ChangeCursor | undefined } {
  const out = new Collector(now);
  const scanBudget = Math.max(MIN_SCAN, maxRows * SCAN_PER_ROW);
  let scanned = 0;
  let taken = 0;
  let resume = from;
  for (let s = from?.shard ?? 0; s < shards.length; s++) {
    const tables = shards[s]!.tables;
    for (let ti = resume?.table ?? 0; ti < tables.length; ti++) {
      const t = tables[ti];
      let row = 0;
      if (resume !== undefined) {
        if (t !== undefined && resume.keys === t.keys && resume.epoch === t.keys.epoch) {
          row = resume.row;
        }
        resume = undefined;
      }
      if (t === undefined) continue;
      const keys = t.keys;
      if (!include(t.quota.name)) {
        // Not persisted (any more): nothing to remember for a host.
        if (keys.tracked) {
          keys.tracked = false;
          keys.takeGone();
        }
        continue;
      }
      keys.tracked = true;
      if (row === 0) {
        const gone = keys.takeGone();
        if (gone.keys.length > 0) out.gone.push({ quota: t.quota.name, keys: gone.keys });
        if (gone.overflowed && !out.overflowed.includes(t.quota.name)) {
          out.overflowed.push(t.quota.name);
        }
      }
      if (keys.changed === 0) continue;
      for (; row < keys.keys.length; row++) {
        if (taken >= maxRows || scanned >= scanBudget) {
          return {
            rows: out.result(),
            next: { shard: s, table: ti, row, keys, epoch: keys.epoch },
          };
        }
        scanned++;
        if (keys.keys[row] === undefined || !keys.isChanged(row)) continue;
        out.add(t, row);
        keys.clearMark(row);
        taken++;
      }
    }
    resume = undefined;
  }
  return { rows: out.result(), next: undefined };
}

/** A layout rows were stored under, compiled once for every row that uses it. */
export class StoredLayout {
  /** The quota this layout was last compared with, and whether rows convert to it unchanged. */
  private comparedWith: CompiledQuota | undefined;
  private unchanged = false;

  private constructor(
    readonly quota: string,
    readonly limits: readonly CompiledLimit[],
    readonly stride: number,
  ) {}

  /** Throws SnapshotError when the limits do not compile to `stride` numbers a row. */
  static of(quota: string, limits: readonly StoredLimitSpec[], stride: number): StoredLayout {
    let compiled: CompiledQuota;
    try {
      compiled = compileStoredQuota(quota, limits);
    } catch (error) {
      throw new SnapshotError(`stored layout of ${quota}: ${String(error)}`);
    }
    if (compiled.stride !== stride) {
      throw new SnapshotError(`stored layout of ${quota}: rows of ${stride} numbers do not match`);
    }
    return new StoredLayout(quota, compiled.limits, stride);
  }

  /** True when a row of this layout is a row of `q` as it is (no conversion): stored as loaded. */
  sameAs(q: CompiledQuota): boolean {
    if (this.comparedWith !== q) {
      this.comparedWith = q;
      this.unchanged =
        this.stride === q.stride &&
        this.limits.length === q.limits.length &&
        this.limits.every((l, i) => {
          const n = q.limits[i]!;
          return (
            l.name === n.name &&
            l.layoutKey === n.layoutKey &&
            l.offset === n.offset &&
            l.capacity === n.capacity
          );
        });
    }
    return this.unchanged;
  }
}

/**
 * What became of a stored key: loaded; kept as the engine holds it (its state is newer than the
 * stored one); its quota is not configured; or unreadable, numbers no engine could have written
 * (the problem names the field), so nothing of it is loaded.
 */
export type RestoredKey = 'loaded' | 'kept' | 'unknown-quota' | { readonly unreadable: string };

/**
 * Loads one stored key unless the engine holds it already, or its numbers are impossible. The row
 * is left unmarked when it converted unchanged: it is stored as it is.
 */
export function restoreStoredKey(
  q: CompiledQuota,
  [shard, table, hash]: [Shard, TableState, number],
  layout: StoredLayout,
  key: string,
  state: Float64Array,
  offset: number,
  leases: readonly StoredLease[],
  now: number,
): RestoredKey {
  // From now on a key dropped while changed is remembered, so its stored copy is deleted.
  table.keys.tracked = true;
  if (table.keys.find(key, hash) >= 0) return 'kept';
  const problem = storedRowProblem(layout.limits, state, offset);
  if (problem !== undefined) return { unreadable: problem };
  shard.load(table, key, hash, layout.limits, state, offset, leases, now);
  const row = table.keys.find(key, hash);
  if (row >= 0 && layout.sameAs(q)) table.keys.clearMark(row);
  return 'loaded';
}

/** Marks rows of a quota changed: all of them, or those of `keys`; absent keys count as dropped. */
export function markChanged(
  tables: readonly (TableState | undefined)[],
  keys: readonly string[] | undefined,
  tableOf: (key: string) => [Shard, TableState, number],
): void {
  if (keys === undefined) {
    for (const t of tables) t?.keys.markAll();
    return;
  }
  for (const key of keys) {
    const [, t, hash] = tableOf(key);
    // The host persists this quota: its stored copy of a key the engine dropped must go.
    t.keys.tracked = true;
    const row = t.keys.find(key, hash);
    if (row >= 0) t.keys.mark(row);
    else t.keys.forget(key);
  }
}
