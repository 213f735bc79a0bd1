import { encodeEntry, type ControlEntry, type ControlSet } from '@app/contracts';
import Database from 'better-sqlite3';
import { openSqliteFile, type SqliteLog } from '../ops/persistence/sqlite-file';
import { ControlEntries } from './control-entries';

/** Beside the usage snapshots (limiter.sqlite), in a file of its own: neither can break the other. */
export const CONTROL_DATABASE_FILE = 'limiter-control.sqlite';

export type ControlStoreLog = SqliteLog;

/** The last control set this replica put in force, and when (undefined: not an instant). */
export interface StoredControlSet {
  readonly set: ControlSet;
  readonly savedAt: number | undefined;
}

/** The latest instant a Date holds (ECMAScript's time range). */
const MAX_DATE_MS = 8.64e15;

interface Row {
  saved_at: number;
  entries: string;
}

// One row: the whole set is replaced at once, so a crash leaves the old set or the new one.
function createSchema(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS control_set (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      saved_at INTEGER NOT NULL,
      entries TEXT NOT NULL
    ) STRICT`);
}

/**
 * The last control set applied, kept under DATA_DIR so that a limiter restarting while NATS or the
 * admin is down serves the admin's quotas, not just its own config. Entries are stored as the KV
 * holds them ({ key, value }) and read back through the same validation as a KV entry.
 */
export class ControlStore {
  private readonly upsert: Database.Statement<[number, string]>;
  private readonly select: Database.Statement<[], Row>;
  private lastWritten = '';

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {
    this.upsert = db.prepare(
      `INSERT INTO control_set (id, saved_at, entries) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET saved_at = excluded.saved_at, entries = excluded.entries`,
    );
    this.select = db.prepare('SELECT saved_at, entries FROM control_set WHERE id = 1');
  }

  /**
   * Opens (creating) the database under `dir`. A damaged file is moved aside and replaced by an
   * empty one; any other failure answers undefined (the limiter then runs without the copy).
   */
  static open(dir: string, log: ControlStoreLog): ControlStore | undefined {
    const opened = openSqliteFile(dir, CONTROL_DATABASE_FILE, createSchema, log, 'the control set');
    return opened === undefined ? undefined : new ControlStore(opened.db, opened.path);
  }

  /** The stored set, undefined when none was stored; unreadable entries are logged and left out. */
  load(log: ControlStoreLog): StoredControlSet | undefined {
    const row = this.select.get();
    if (row === undefined) return undefined;
    let raw: unknown;
    try {
      raw = JSON.parse(row.entries);
    } catch (error) {
      log.error(`${this.path}: the stored control set is not JSON (${String(error)}); ignored`);
      return undefined;
    }
    if (!Array.isArray(raw)) {
      log.error(`${this.path}: the stored control set is not a list; ignored`);
      return undefined;
    }
    const entries = new ControlEntries();
    for (const item of raw as unknown[]) {
      const { key, value } = (item ?? {}) as { key?: unknown; value?: unknown };
      const problem =
        typeof key === 'string' && typeof value === 'string'
          ? entries.put(key, value)
          : 'not a { key, value } entry';
      if (problem !== undefined) log.warn(`${this.path}: stored entry left out: ${problem}`);
    }
    this.lastWritten = row.entries;
    const at: unknown = row.saved_at;
    const savedAt =
      typeof at === 'number' && Number.isSafeInteger(at) && at >= 0 && at <= MAX_DATE_MS
        ? at
        : undefined;
    if (savedAt === undefined) {
      log.warn(`${this.path}: saved_at: not an instant (epoch ms); the set is read without it`);
    }
    return { set: entries.toSet(), savedAt };
  }

  /** Replaces the stored set; a set equal to the stored one is not written again. */
  save(set: ControlSet, now: number): void {
    const entries: ControlEntry[] = [
      ...set.quotas.map((quota) => ({ kind: 'quota' as const, quota })),
      ...set.providers.map((provider) => ({ kind: 'provider' as const, provider })),
    ];
    const json = JSON.stringify(entries.map(encodeEntry));
    if (json === this.lastWritten) return;
    this.upsert.run(now, json);
    this.lastWritten = json;
  }

  close(): void {
    this.db.close();
  }
}
