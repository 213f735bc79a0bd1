import Database from 'better-sqlite3';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';

export const DATABASE_FILE = 'limiter.sqlite';
const SCHEMA_VERSION = 1;
/** A second process on the same file (a replica shutting down) waits rather than failing. */
const BUSY_TIMEOUT_MS = 5000;
/** SQLite's answers for a file that is not a sound database: it is moved aside, not overwritten. */
const DAMAGED = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB']);

export interface StoredQuota {
  readonly quota: string;
  readonly takenAt: number;
  /** A QuotaSnapshot as JSON. */
  readonly snapshot: string;
}

export interface StoreLog {
  error(message: string): void;
  warn(message: string): void;
}

function openDatabase(path: string): Database.Database {
  const db = new Database(path);
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    // With WAL, NORMAL survives a process crash; only a power loss may lose the last write.
    db.pragma('synchronous = NORMAL');
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') {
      throw Object.assign(new Error(`integrity check failed: ${String(check)}`), {
        code: 'SQLITE_CORRUPT',
      });
    }
    db.exec(`CREATE TABLE IF NOT EXISTS quota_snapshot (
      quota TEXT PRIMARY KEY,
      taken_at INTEGER NOT NULL,
      snapshot TEXT NOT NULL
    ) STRICT`);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
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
    const path = join(dir, DATABASE_FILE);
    try {
      mkdirSync(dir, { recursive: true });
      return new SnapshotStore(openDatabase(path), path);
    } catch (error) {
      if (!DAMAGED.has(errorCode(error) ?? '')) {
        log.error(`cannot open ${path} (${String(error)}): usage will not survive a restart`);
        return undefined;
      }
      const aside = `${path}.damaged-${Date.now()}`;
      log.error(`${path} is damaged (${String(error)}): moved to ${aside}, starting empty`);
      try {
        for (const suffix of ['', '-wal', '-shm']) {
          if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
        }
        return new SnapshotStore(openDatabase(path), path);
      } catch (again) {
        log.error(`cannot recreate ${path} (${String(again)}): usage will not survive a restart`);
        return undefined;
      }
    }
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
