import Database from 'better-sqlite3';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';

/** A second process on the same file (a replica shutting down) waits rather than failing. */
const BUSY_TIMEOUT_MS = 5000;
/** SQLite's answers for a file that is not a sound database: it is moved aside, not overwritten. */
const DAMAGED = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB']);

export interface SqliteLog {
  error(message: string): void;
  warn(message: string): void;
}

/** SQLite's quick_check: undefined when sound, else what is wrong. Reads the whole file. */
export function integrityProblem(db: Database.Database): string | undefined {
  const check = db.pragma('quick_check', { simple: true });
  return check === 'ok' ? undefined : `integrity check failed: ${String(check)}`;
}

function openDatabase(
  path: string,
  schema: (db: Database.Database) => void,
  check: boolean,
): Database.Database {
  const db = new Database(path);
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    // With WAL, NORMAL survives a process crash; only a power loss may lose the last write.
    db.pragma('synchronous = NORMAL');
    const problem = check ? integrityProblem(db) : undefined;
    if (problem !== undefined) throw Object.assign(new Error(problem), { code: 'SQLITE_CORRUPT' });
    schema(db);
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

/**
 * Opens (creating) `dir/file` in WAL mode and applies `schema`. A damaged file is moved aside
 * (with its -wal/-shm) and replaced by an empty one; any other failure is logged with `lost` (what
 * will not survive a restart) and answers undefined, so the limiter runs on without the file.
 * `check: false` leaves the integrity check (a read of the whole file) to the caller, who may run
 * it beside other work and call `replaceDamaged`.
 */
export function openSqliteFile(
  dir: string,
  file: string,
  schema: (db: Database.Database) => void,
  log: SqliteLog,
  lost: string,
  check = true,
): { db: Database.Database; path: string } | undefined {
  const path = join(dir, file);
  try {
    mkdirSync(dir, { recursive: true });
    return { db: openDatabase(path, schema, check), path };
  } catch (error) {
    if (!DAMAGED.has(errorCode(error) ?? '')) {
      log.error(`cannot open ${path} (${String(error)}): ${lost} will not survive a restart`);
      return undefined;
    }
    return replaceDamaged(path, String(error), schema, log, lost);
  }
}

/** Moves a damaged file aside (with its -wal/-shm, its connections closed) and opens an empty one. */
export function replaceDamaged(
  path: string,
  problem: string,
  schema: (db: Database.Database) => void,
  log: SqliteLog,
  lost: string,
): { db: Database.Database; path: string } | undefined {
  const aside = `${path}.damaged-${Date.now()}`;
  log.error(`${path} is damaged (${problem}): moved to ${aside}, starting empty`);
  try {
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
    }
    return { db: openDatabase(path, schema, true), path };
  } catch (again) {
    log.error(`cannot recreate ${path} (${String(again)}): ${lost} will not survive a restart`);
    return undefined;
  }
}
