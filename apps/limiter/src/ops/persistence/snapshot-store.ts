import Database from 'better-sqlite3';
import { openSqliteFile, type SqliteLog } from './sqlite-file';

export const DATABASE_FILE = 'limiter.sqlite';
const SCHEMA_VERSION = 1;

export interface StoredQuota {
  readonly quota: string;
  readonly takenAt: number;
  /** A QuotaSnapshot as JSON. */
  readonly snapshot: string;
}

export type StoreLog = SqliteLog;

function createSchema(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS quota_snapshot (
      quota TEXT PRIMARY KEY,
      taken_at INTEGER NOT NULL,
      snapshot TEXT NOT NULL
    ) STRICT`);
  db.pragma(`user_version = ${SCHEMA_VERSION}`);
}

/** Per-quota snapshots in SQLite (WAL), one row a quota, so a write touches changed quotas only. */
export class SnapshotStore {
  private readonly upsert: Database.Statement<[string, number, string]>;
  private readonly remove: Database.Statement<[string]>;

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {
    this.upsert = db.prepare(
      `INSERT INTO quota_snapshot (quota, taken_at, snapshot) VALUES (?, ?, ?)
       ON CONFLICT (quota) DO UPDATE SET taken_at = excluded.taken_at, snapshot = excluded.snapshot`,
    );
    this.remove = db.prepare('DELETE FROM quota_snapshot WHERE quota = ?');
  }

  /**
   * Opens (creating) the database under `dir`. A damaged file is moved aside and replaced by an
   * empty one; any other failure answers undefined (the limiter then runs without persistence).
   */
  static open(dir: string, log: StoreLog): SnapshotStore | undefined {
    const opened = openSqliteFile(dir, DATABASE_FILE, createSchema, log, 'usage');
    return opened === undefined ? undefined : new SnapshotStore(opened.db, opened.path);
  }

  readAll(): StoredQuota[] {
    return this.db
      .prepare<[], { quota: string; taken_at: number; snapshot: string }>(
        'SELECT quota, taken_at, snapshot FROM quota_snapshot',
      )
      .all()
      .map((row) => ({ quota: row.quota, takenAt: row.taken_at, snapshot: row.snapshot }));
  }

  /** One transaction: a crash leaves the previous write or this one, never half of it. */
  write(changed: readonly StoredQuota[], removed: readonly string[]): void {
    this.db.transaction(() => {
      for (const q of changed) this.upsert.run(q.quota, q.takenAt, q.snapshot);
      for (const name of removed) this.remove.run(name);
    })();
  }

  close(): void {
    this.db.close();
  }
}
