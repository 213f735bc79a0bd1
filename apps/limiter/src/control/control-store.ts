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
  /** The signed sequence last taken for each bucket key (ControlEntries.sequences). */
  readonly sequences: readonly (readonly [string, number])[];
}

/** Keys whose sequences are read back at most: a bucket of 64 MiB holds fewer. */
export const MAX_STORED_SEQUENCES = 1_000_000;
/** A bucket key is far shorter (a prefix and a hex-encoded name of at most 200 characters). */
const MAX_STORED_KEY_CHARS = 1024;

/** The latest instant a Date holds (ECMAScript's time range). */
const MAX_DATE_MS = 8.64e15;

interface Row {
  saved_at: number;
  entries: string;
  sequences: string;
}

// One row: the whole set is replaced at once, so a crash leaves the old set or the new one.
function createSchema(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS control_set (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      saved_at INTEGER NOT NULL,
      entries TEXT NOT NULL,
      sequences TEXT NOT NULL DEFAULT '[]'
    ) STRICT`);
  // A file of a version before signed sequences were kept.
  const columns = db.prepare('PRAGMA table_info(control_set)').all() as { name: string }[];
  if (!columns.some((column) => column.name === 'sequences')) {
    db.exec(`ALTER TABLE control_set ADD COLUMN sequences TEXT NOT NULL DEFAULT '[]'`);
  }
}

/** The stored `[key, seq]` pairs that are such (a positive safe integer); the rest are left out. */
function readSequences(json: string, path: string, log: ControlStoreLog): [string, number][] {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    raw = undefined;
  }
  if (!Array.isArray(raw) || raw.length > MAX_STORED_SEQUENCES) {
    log.warn(
      `${path}: sequences: not a list of at most ${MAX_STORED_SEQUENCES}; read without them`,
    );
    return [];
  }
  const sequences: [string, number][] = [];
  let bad = 0;
  for (const pair of raw as unknown[]) {
    const [key, seq] = Array.isArray(pair) ? (pair as unknown[]) : [];
    const ok =
      typeof key === 'string' &&
      key.length > 0 &&
      key.length <= MAX_STORED_KEY_CHARS &&
      typeof seq === 'number' &&
      Number.isSafeInteger(seq) &&
      seq > 0;
    if (ok) sequences.push([key, seq]);
    else bad++;
  }
  if (bad > 0) log.warn(`${path}: sequences: ${bad} not [key, positive integer], left out`);
  return sequences;
}

/**
 * The last control set applied, kept under DATA_DIR so that a limiter restarting while NATS or the
 * admin is down serves the admin's quotas, not just its own config. Entries are stored as the KV
 * holds them ({ key, value }) and read back through the same validation as a KV entry.
 */
export class ControlStore {
  private readonly upsert: Database.Statement<[number, string, string]>;
  private readonly select: Database.Statement<[], Row>;
  private lastWritten = '';

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {
    this.upsert = db.prepare(
      `INSERT INTO control_set (id, saved_at, entries, sequences) VALUES (1, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET saved_at = excluded.saved_at, entries = excluded.entries,
         sequences = excluded.sequences`,
    );
    this.select = db.prepare('SELECT saved_at, entries, sequences FROM control_set WHERE id = 1');
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
    this.lastWritten = row.entries + row.sequences;
    const at: unknown = row.saved_at;
    const savedAt =
      typeof at === 'number' && Number.isSafeInteger(at) && at >= 0 && at <= MAX_DATE_MS
        ? at
        : undefined;
    if (savedAt === undefined) {
      log.warn(`${this.path}: saved_at: not an instant (epoch ms); the set is read without it`);
    }
    const sequences = readSequences(String(row.sequences), this.path, log);
    return { set: entries.toSet(), savedAt, sequences };
  }

  /**
   * Replaces the stored set and the sequences taken with it; the same again is not written.
   */
  save(set: ControlSet, now: number, sequences: readonly (readonly [string, number])[] = []): void {
    const entries: ControlEntry[] = [
      ...set.quotas.map((quota) => ({ kind: 'quota' as const, quota })),
      ...set.providers.map((provider) => ({ kind: 'provider' as const, provider })),
    ];
    const json = JSON.stringify(entries.map(encodeEntry));
    const sequencesJson = JSON.stringify(sequences);
    if (json + sequencesJson === this.lastWritten) return;
    this.upsert.run(now, json, sequencesJson);
    this.lastWritten = json + sequencesJson;
  }

  close(): void {
    this.db.close();
  }
}
