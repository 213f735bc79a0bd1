import type BetterSqlite3 from 'better-sqlite3';
import type { MessagePort } from 'node:worker_threads';
import type { ReadSlice, SliceRow, sliceOf } from './stored-slice';
import type { StoreSql } from './usage-store';

/** What the store thread is started with. */
export interface StoreThreadData {
  readonly path: string;
  readonly sql: StoreSql;
  readonly busyTimeoutMs: number;
  /** Rows a sweep step reads and decides in one transaction. */
  readonly sweepStep: number;
  /** SQLite page cache of the thread's connection. */
  readonly cacheKiB: number;
  /** Rows of a save held and sorted before they are written (a bound on that memory). */
  readonly sortRows: number;
  /** A file beside the caller, from which `better-sqlite3` is resolved. */
  readonly requireFrom: string;
}

/** A quota's layout as a batch refers to it. */
export interface BatchQuota {
  readonly name: string;
  /** JSON of the enforced limits (quota_layout.limits). */
  readonly limits: string;
  readonly stride: number;
}

/** Changed keys of one slice: row i is entry i of `quota`, `keys`, `idleAt`. */
export interface WriteRequest {
  readonly kind: 'write';
  readonly takenAt: number;
  readonly quotas: readonly BatchQuota[];
  readonly quota: Int32Array;
  readonly keys: readonly string[];
  /** Rows' numbers one after the other, `quotas[quota[i]].stride` each. */
  readonly state: Float64Array;
  readonly idleAt: Float64Array;
  /** Rows holding leases (ascending), and their leases as JSON. */
  readonly leaseRows: readonly number[];
  readonly leases: readonly string[];
  /** Keys whose stored rows must go, deleted before the rows are written. */
  readonly gone: readonly { readonly quota: string; readonly keys: readonly string[] }[];
}

export type StoreRequest =
  /** Part of save `save`: its slices and purges go into one transaction, ended by `commit`. */
  | (WriteRequest & { readonly save: number })
  /** Deletes the quotas' layouts: their keys become orphans, which the sweep deletes. */
  | { readonly kind: 'purge'; readonly save: number; readonly quotas: readonly string[] }
  /** Ends save `save`: commits it, or answers the failure that rolled it back. */
  | { readonly kind: 'commit'; readonly save: number }
  /** Examines up to `maxRows` stored rows, continuing where the last sweep stopped. */
  | { readonly kind: 'sweep'; readonly now: number; readonly maxRows: number }
  /**
   * The next `limit` live keys of `quota` for read `read` (the thread keeps where each read
   * stands, so several requests of one read can be on their way at once).
   */
  | {
      readonly kind: 'read';
      readonly read: number;
      readonly quota: string;
      readonly now: number;
      readonly limit: number;
    }
  /** The thread's nice value from now on (Linux): shutdown raises it back to the loop's. */
  | { readonly kind: 'nice'; readonly nice: number }
  | { readonly kind: 'close' };

export type StoreReply =
  | {
      readonly id: number;
      readonly ok: true;
      readonly written: number;
      readonly deleted: number;
      readonly slice?: ReadSlice;
    }
  | { readonly id: number; readonly ok: false; readonly error: string };

/**
 * The body of the store thread, which owns the writes to the usage database so that SQLite (its
 * statements and WAL checkpoints, tens of ms at times) never runs on the event loop. It runs
 * from its source text (`runStoreThread.toString()`, see store-thread.ts): it must use nothing but its
 * parameters and JavaScript's globals. Requests are handled in arrival order; the requests of one
 * save share one transaction, so a crash keeps the previous save or this one, and a page of the
 * B-tree is written once per save however many slices touch it. Every request gets exactly one
 * reply.
 */
export function runStoreThread(
  port: MessagePort,
  data: StoreThreadData,
  Database: typeof BetterSqlite3,
  decode: typeof sliceOf,
  renice: (nice: number) => void,
): void {
  const db = new Database(data.path);
  db.pragma(`busy_timeout = ${data.busyTimeoutMs}`);
  db.pragma('synchronous = NORMAL');
  // The pages a save touches stay cached between saves (SQLite's default is 2 MiB).
  db.pragma(`cache_size = -${data.cacheKiB}`);
  const sql = data.sql;
  const upsert = db.prepare(sql.upsert);
  const remove = db.prepare<[string, string]>(sql.remove);
  const findLayout = db.prepare<[string, string, number], { id: number }>(sql.findLayout);
  const addLayout = db.prepare<[string, string, number], { id: number }>(sql.addLayout);
  const purge = db.prepare<[string]>(sql.purge);
  const layoutIds = db.prepare<[], number>(sql.layoutIds).pluck();
  type Swept = { quota: string; key: string; layout: number; idle_at: number };
  const sweepFirst = db.prepare<[number], Swept>(sql.sweepFirst);
  const sweepNext = db.prepare<[string, string, number], Swept>(sql.sweepNext);
  const readSlice = db.prepare<[string, string, number, number], SliceRow>(sql.readSlice).raw();
  /** quota \0 stride \0 limits → quota_layout.id */
  const layouts = new Map<string, number>();
  let sweptTo: { quota: string; key: string } | undefined;

  function layoutOf(q: BatchQuota): number {
    const cacheKey = `${q.name}\u0000${q.stride}\u0000${q.limits}`;
    let id = layouts.get(cacheKey);
    if (id === undefined) {
      id = (
        findLayout.get(q.name, q.limits, q.stride) ?? addLayout.get(q.name, q.limits, q.stride)!
      ).id;
      layouts.set(cacheKey, id);
    }
    return id;
  }

  /** Rows of the open save not written yet, by quota \0 key (a later copy replaces one). */
  type Row = [string, string, number, Buffer, string | null, number, number];
  const held = new Map<string, Row>();

  function write(m: WriteRequest): { written: number; deleted: number } {
    let deleted = 0;
    for (const g of m.gone) {
      for (const key of g.keys) {
        held.delete(`${g.quota}\u0000${key}`);
        deleted += remove.run(g.quota, key).changes;
      }
    }
    const ids = m.quotas.map(layoutOf);
    const leases: (string | null)[] = new Array<string | null>(m.keys.length).fill(null);
    for (let j = 0; j < m.leaseRows.length; j++) leases[m.leaseRows[j]!] = m.leases[j]!;
    for (let i = 0, offset = 0; i < m.keys.length; i++) {
      const q = m.quotas[m.quota[i]!]!;
      // A view of the slice's numbers, which stay alive until written.
      const state = Buffer.from(m.state.buffer, m.state.byteOffset + offset * 8, q.stride * 8);
      offset += q.stride;
      const key = m.keys[i]!;
      held.set(`${q.name}\u0000${key}`, [
        q.name,
        key,
        ids[m.quota[i]!]!,
        state,
        leases[i]!,
        m.takenAt,
        m.idleAt[i]!,
      ]);
    }
    return { written: held.size >= data.sortRows ? flush() : 0, deleted };
  }

  /**
   * Writes the held rows in key order: neighbouring keys share B-tree pages, so each page is read
   * and written once, where rows in the engine's order would visit pages at random.
   */
  function flush(): number {
    const rows = [...held.keys()].sort();
    for (const id of rows) upsert.run(...held.get(id)!);
    held.clear();
    return rows.length;
  }

  function sweep(now: number, maxRows: number): { written: number; deleted: number } {
    const live = new Set(layoutIds.all());
    let examined = 0;
    let deleted = 0;
    while (examined < maxRows) {
      const n = Math.min(data.sweepStep, maxRows - examined);
      const rows =
        sweptTo === undefined ? sweepFirst.all(n) : sweepNext.all(sweptTo.quota, sweptTo.key, n);
      db.transaction(() => {
        for (const r of rows) {
          if (r.idle_at <= now || !live.has(r.layout))
            deleted += remove.run(r.quota, r.key).changes;
        }
      })();
      examined += rows.length;
      const last = rows[rows.length - 1];
      // A short slice ends the pass: the next sweep starts again from the first key.
      sweptTo = rows.length < n || last === undefined ? undefined : last;
      if (sweptTo === undefined) break;
    }
    return { written: 0, deleted };
  }

  /** Where each read stands: the last key it returned; reads that returned their last slice. */
  const reads = new Map<number, string>();
  const finished = new Set<number>();

  function read(m: { read: number; quota: string; now: number; limit: number }): ReadSlice {
    const after = reads.get(m.read) ?? (finished.has(m.read) ? undefined : '');
    const { slice, last } = decode(
      after === undefined ? undefined : readSlice.get(m.quota, after, m.now, m.limit),
      m.limit,
    );
    if (last === undefined) {
      reads.delete(m.read);
      finished.add(m.read);
    } else {
      reads.set(m.read, last);
    }
    return slice;
  }

  /** The save whose transaction is open, and the first failure of a save (rolled back). */
  let open: number | undefined;
  let failed: { save: number; error: string } | undefined;

  /** Runs `work` inside the transaction of `save` (opened by its first request). */
  function inSave(save: number, work: () => { written: number; deleted: number }) {
    if (failed?.save === save) throw new Error(failed.error);
    if (open !== save) {
      if (open !== undefined && db.inTransaction) db.exec('ROLLBACK'); // a save never committed
      held.clear();
      db.exec('BEGIN');
      open = save;
    }
    try {
      return work();
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      open = undefined;
      held.clear();
      failed = { save, error: String(error) };
      throw error;
    }
  }

  function commit(save: number): { written: number; deleted: number } {
    if (failed?.save === save) throw new Error(failed.error);
    let written = 0;
    if (open === save) {
      written = inSave(save, () => ({ written: flush(), deleted: 0 })).written;
      open = undefined;
      db.exec('COMMIT');
    }
    return { written, deleted: 0 };
  }

  port.on('message', (m: StoreRequest & { id: number }) => {
    let reply: StoreReply;
    try {
      let done: { written: number; deleted: number; slice?: ReadSlice } = {
        written: 0,
        deleted: 0,
      };
      switch (m.kind) {
        case 'write':
          done = inSave(m.save, () => write(m));
          break;
        case 'purge':
          done = inSave(m.save, () => {
            for (const quota of m.quotas) purge.run(quota);
            layouts.clear();
            return { written: 0, deleted: 0 };
          });
          break;
        case 'commit':
          done = commit(m.save);
          break;
        case 'sweep':
          done = sweep(m.now, m.maxRows);
          break;
        case 'read':
          done = { written: 0, deleted: 0, slice: read(m) };
          break;
        case 'nice':
          renice(m.nice);
          break;
        case 'close':
          held.clear();
          if (db.inTransaction) db.exec('ROLLBACK');
          db.close();
          break;
      }
      reply = { id: m.id, ok: true, ...done };
    } catch (error) {
      // A rolled-back transaction may have added a layout the cache now names.
      layouts.clear();
      reply = { id: m.id, ok: false, error: String(error) };
    }
    const slice = reply.ok ? reply.slice : undefined;
    const moved =
      slice === undefined ? [] : [slice.state.buffer, slice.layouts.buffer, slice.strides.buffer];
    port.postMessage(reply, moved as ArrayBuffer[]);
    if (m.kind === 'close') port.close();
  });
}
