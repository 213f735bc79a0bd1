import type Database from 'better-sqlite3';
import { parseQuotaSnapshot, storedUntil } from './persisted-quotas';
import { sliceOf, type ReadSlice, type SliceRow } from './stored-slice';
import { integrityProblem, openSqliteFile, replaceDamaged, type SqliteLog } from './sqlite-file';

export const DATABASE_FILE = 'limiter.sqlite';
/** 1: one JSON snapshot per quota (quota_snapshot). 2: one row per (quota, key). */
const SCHEMA_VERSION = 2;

export type StoreLog = SqliteLog & { log(message: string): void };

/**
 * Statements of the store thread (a worker thread with its own connection). Rows are keyed by
 * (quota, key); `state` is the key's row of the engine (float64, native byte order), laid out by
 * `layout`, a row of quota_layout. Deleting a quota's layouts orphans its keys at once; the
 * sweep deletes orphans and rows whose `idle_at` passed, a slice at a time.
 */
export const STORE_SQL = {
  upsert: `INSERT INTO key_state (quota, key, layout, state, leases, taken_at, idle_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (quota, key) DO UPDATE SET layout = excluded.layout, state = excluded.state,
      leases = excluded.leases, taken_at = excluded.taken_at, idle_at = excluded.idle_at`,
  remove: 'DELETE FROM key_state WHERE quota = ? AND key = ?',
  findLayout: 'SELECT id FROM quota_layout WHERE quota = ? AND limits = ? AND stride = ?',
  addLayout: 'INSERT INTO quota_layout (quota, limits, stride) VALUES (?, ?, ?) RETURNING id',
  purge: 'DELETE FROM quota_layout WHERE quota = ?',
  layoutIds: 'SELECT id FROM quota_layout',
  sweepFirst: 'SELECT quota, key, layout, idle_at FROM key_state ORDER BY quota, key LIMIT ?',
  sweepNext: `SELECT quota, key, layout, idle_at FROM key_state WHERE (quota, key) > (?, ?)
    ORDER BY quota, key LIMIT ?`,
  // One row a slice, built by SQLite: a row a key would cost a JavaScript value per column, and
  // a BLOB a Buffer per key, more than the rest of a restore. The last column is the last key.
  readSlice: `SELECT json_group_array(key), json_group_array(layout), group_concat(hex(state), ''),
      json_group_array(length(CAST(state AS BLOB))), json_group_array(leases), count(*), max(key)
    FROM (SELECT key, layout, state, leases FROM key_state
      WHERE quota = ? AND key > ? AND idle_at > ? ORDER BY key LIMIT ?)`,
} as const;
export type StoreSql = typeof STORE_SQL;

function createTables(db: Database.Database): void {
  // AUTOINCREMENT: an id is never reused, so keys orphaned by a purge stay orphans.
  db.exec(`CREATE TABLE IF NOT EXISTS quota_layout (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      quota TEXT NOT NULL,
      limits TEXT NOT NULL,
      stride INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX IF NOT EXISTS quota_layout_by_quota ON quota_layout (quota);
    CREATE TABLE IF NOT EXISTS key_state (
      quota TEXT NOT NULL,
      key TEXT NOT NULL,
      layout INTEGER NOT NULL,
      state BLOB NOT NULL,
      leases TEXT,
      taken_at INTEGER NOT NULL,
      idle_at INTEGER NOT NULL,
      PRIMARY KEY (quota, key)
    ) STRICT, WITHOUT ROWID`);
}

/** Finite epoch ms, rounded up: a row is deleted no earlier than it holds nothing. */
export function idleInstant(at: number): number {
  return Number.isFinite(at) ? Math.ceil(at) : Number.MAX_SAFE_INTEGER;
}

/**
 * Version 1 kept one JSON snapshot per quota. Its keys become rows, once, at the first start of
 * this version; they are kept until their quota's longest window plus a day has passed (the old
 * format does not say when each key went idle, so the bound is the old one). Unreadable
 * snapshots are dropped with a log line, as the old version did.
 */
function migrateFromSnapshots(db: Database.Database, log: StoreLog): void {
  const old = db
    .prepare<[], { quota: string; taken_at: number; snapshot: string }>(
      'SELECT quota, taken_at, snapshot FROM quota_snapshot',
    )
    .all();
  const addLayout = db.prepare<[string, string, number], { id: number }>(STORE_SQL.addLayout);
  const upsert = db.prepare(STORE_SQL.upsert);
  let keys = 0;
  for (const row of old) {
    const s = parseQuotaSnapshot(row.snapshot);
    if (s === undefined || s.name !== row.quota || s.rows.length !== s.keys.length * s.stride) {
      log.error(`quota ${row.quota} of the old format is unreadable: dropped`);
      continue;
    }
    const layout = addLayout.get(s.name, JSON.stringify(s.limits), s.stride)!.id;
    const leases = new Map<string, { id: string; requestId: string; expiresAt: number }[]>();
    for (const l of s.leases) {
      const list = leases.get(l.key) ?? [];
      list.push({ id: l.id, requestId: l.requestId, expiresAt: l.expiresAt });
      leases.set(l.key, list);
    }
    const until = idleInstant(storedUntil(s, row.taken_at));
    s.keys.forEach((key, i) => {
      const state = Float64Array.from(s.rows.slice(i * s.stride, (i + 1) * s.stride));
      const held = leases.get(key);
      const json = held === undefined ? null : JSON.stringify(held);
      upsert.run(s.name, key, layout, Buffer.from(state.buffer), json, row.taken_at, until);
    });
    keys += s.keys.length;
  }
  db.exec('DROP TABLE quota_snapshot');
  log.log(`converted ${keys} keys of ${old.length} quotas to one row per key`);
}

function createSchema(db: Database.Database, log: StoreLog): void {
  db.transaction(() => {
    createTables(db);
    const v1 = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'quota_snapshot'")
      .get();
    if (v1 !== undefined) migrateFromSnapshots(db, log);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  })();
}

export interface StoredLayoutRow {
  readonly id: number;
  readonly quota: string;
  readonly limits: string;
  readonly stride: number;
}

/**
 * The usage database as the event loop sees it: opened (created, migrated, or moved aside when
 * damaged) and read at start and when a quota comes back. Writes go through the store thread
 * (store-thread.ts), which opens its own connection.
 */
export class UsageStore {
  private slices: Database.Statement<[string, string, number, number], SliceRow> | undefined;

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {}

  /**
   * Opens (creating) the database under `dir`. A damaged file is moved aside and replaced by an
   * empty one; any other failure answers undefined (the limiter then runs without persistence).
   */
  static open(dir: string, log: StoreLog): UsageStore | undefined {
    const schema = (db: Database.Database): void => createSchema(db, log);
    // The integrity check (a read of the whole file) is left to `check`, run while restoring.
    const opened = openSqliteFile(dir, DATABASE_FILE, schema, log, 'usage', false);
    return opened === undefined ? undefined : new UsageStore(opened.db, opened.path);
  }

  /** SQLite's quick_check of the whole file: undefined when sound, else what is wrong. */
  check(): string | undefined {
    return integrityProblem(this.db);
  }

  /**
   * This file was found damaged: closes it, moves it aside and opens an empty one in its place
   * (undefined when that fails too). Other connections to it must be closed first.
   */
  replaceDamaged(problem: string, log: StoreLog): UsageStore | undefined {
    this.db.close();
    const schema = (db: Database.Database): void => createSchema(db, log);
    const opened = replaceDamaged(this.path, problem, schema, log, 'usage');
    return opened === undefined ? undefined : new UsageStore(opened.db, opened.path);
  }

  layouts(): StoredLayoutRow[] {
    return this.db
      .prepare<[], StoredLayoutRow>('SELECT id, quota, limits, stride FROM quota_layout')
      .all();
  }

  /** The quotas that have stored keys (or had: a layout outlives its keys until the next start). */
  storedQuotas(): string[] {
    return this.db.prepare<[], string>('SELECT DISTINCT quota FROM quota_layout').pluck().all();
  }

  /** Up to `limit` live keys of `quota` after `afterKey`, as the store thread reads them. */
  readSlice(
    quota: string,
    afterKey: string,
    now: number,
    limit: number,
  ): { slice: ReadSlice; last: string | undefined } {
    this.slices ??= this.db
      .prepare<[string, string, number, number], SliceRow>(STORE_SQL.readSlice)
      .raw();
    return sliceOf(this.slices.get(quota, afterKey, now, limit), limit);
  }

  /** Drops the layouts of `quotas` no live key uses; their keys are swept as orphans. */
  dropLayoutsExcept(quotas: ReadonlySet<string>, used: ReadonlySet<number>): void {
    const remove = this.db.prepare<[number]>('DELETE FROM quota_layout WHERE id = ?');
    this.db.transaction(() => {
      for (const l of this.layouts()) if (quotas.has(l.quota) && !used.has(l.id)) remove.run(l.id);
    })();
  }

  close(): void {
    this.db.close();
  }
}
