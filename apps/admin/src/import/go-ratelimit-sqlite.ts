import Database from 'better-sqlite3';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { stringify } from 'yaml';
import { GoRatelimitRows } from './go-ratelimit-rows';

export { BadGoRatelimitRowsError, NotGoRatelimitDatabaseError } from './go-ratelimit-rows';

/**
 * go-ratelimit's SQLite backend (`backend: sqlite`, its sqlite.go) as the `ratelimits.yaml` that
 * importConfig reads: table `quotas` becomes `quotas`, tables `requests`, `tokens` and `daily`
 * become `state`. Times there are Unix nanoseconds, beyond a double's 53 bits, so they are read
 * as BigInt and written as RFC 3339 with all nine fraction digits, as Go's yaml.v3 writes them.
 * Model names key the document's maps, which therefore have no prototype: a model named
 * `__proto__` is a model like any other.
 */

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

interface ModelState {
  requests: string[];
  tokens: { time: string; count: number }[];
  day_start?: string;
  day_count?: number;
}

type Limits = Record<'max_rpm' | 'max_tpm' | 'max_rpd', number>;

/** `2026-11-21T10:00:01.123456789Z`; undefined for Go's zero time and other instants before 1970. */
export function rfc3339Nano(ns: bigint): string | undefined {
  if (ns <= 0n) return undefined;
  const seconds = new Date(Number(ns / NS_PER_MS)).toISOString().slice(0, 19);
  return `${seconds}.${(ns % NS_PER_S).toString().padStart(9, '0')}Z`;
}

function readQuotas(source: GoRatelimitRows): Record<string, Limits> {
  const quotas = Object.create(null) as Record<string, Limits>;
  const sql = 'SELECT rowid, model, max_rpm, max_tpm, max_rpd FROM quotas ORDER BY model, rowid';
  for (const cells of source.rows('quotas', sql)) {
    const model = cells.model();
    const max_rpm = cells.count('max_rpm');
    const max_tpm = cells.count('max_tpm');
    const max_rpd = cells.count('max_rpd');
    if (model === undefined || !cells.firstOf(model)) continue;
    if (max_rpm === undefined || max_tpm === undefined || max_rpd === undefined) continue;
    quotas[model] = { max_rpm, max_tpm, max_rpd };
  }
  return quotas;
}

/**
 * Requests and tokens older than `since` are left out, as the import counts only the last minute
 * (and go-ratelimit prunes them too), which keeps the document small; rows of any age whose values
 * have the wrong type are read too, to be refused. `daily` is read whole, for the import's note on
 * the day's count.
 */
function readState(source: GoRatelimitRows, since: bigint): Record<string, ModelState> {
  const state = Object.create(null) as Record<string, ModelState>;
  const stateOf = (model: string): ModelState => (state[model] ??= { requests: [], tokens: [] });
  const daily = 'SELECT rowid, model, day_start, day_count FROM daily ORDER BY model, rowid';
  for (const cells of source.rows('daily', daily)) {
    const model = cells.model();
    const dayStart = cells.nanos('day_start');
    const dayCount = cells.count('day_count');
    if (model === undefined || !cells.firstOf(model)) continue;
    const day_start = dayStart === undefined ? undefined : rfc3339Nano(dayStart);
    if (day_start !== undefined && dayCount !== undefined) {
      Object.assign(stateOf(model), { day_start, day_count: dayCount });
    }
  }
  const mistyped = "typeof(ts) <> 'integer' OR typeof(model) <> 'text'";
  const requests = `SELECT rowid, model, ts FROM requests WHERE ts > ? OR ${mistyped} ORDER BY ts, rowid`;
  for (const cells of source.rows('requests', requests, since)) {
    const model = cells.model();
    const ts = cells.nanos('ts');
    const time = ts === undefined ? undefined : rfc3339Nano(ts);
    if (model !== undefined && time !== undefined) stateOf(model).requests.push(time);
  }
  const tokens =
    'SELECT rowid, model, ts, count FROM tokens ' +
    `WHERE ts > ? OR ${mistyped} OR typeof(count) <> 'integer' ORDER BY ts, rowid`;
  for (const cells of source.rows('tokens', tokens, since)) {
    const model = cells.model();
    const ts = cells.nanos('ts');
    const count = cells.count('count');
    const time = ts === undefined ? undefined : rfc3339Nano(ts);
    if (model !== undefined && time !== undefined && count !== undefined) {
      stateOf(model).tokens.push({ time, count });
    }
  }
  return state;
}

/**
 * The document for the state of `path` at `nowMs`. Throws NotGoRatelimitDatabaseError for a file
 * without go-ratelimit's tables, BadGoRatelimitRowsError (naming table, row and column) for values
 * go-ratelimit does not write.
 */
export function goRatelimitDocumentFromSqlite(path: string, nowMs = Date.now()): string {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const source = new GoRatelimitRows(db, path);
    const quotas = readQuotas(source);
    const state = readState(source, (BigInt(nowMs) - 60_000n) * NS_PER_MS);
    source.refuseProblems();
    return stringify({ quotas, state });
  } finally {
    db.close();
  }
}

/** Every SQLite database file starts with these 16 bytes. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

function isSqliteFile(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(SQLITE_HEADER.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
  } finally {
    closeSync(fd);
  }
}

/** The document importConfig reads for go-ratelimit's state at `path`, YAML or SQLite. */
export function goRatelimitDocument(path: string, nowMs = Date.now()): string {
  return isSqliteFile(path)
    ? goRatelimitDocumentFromSqlite(path, nowMs)
    : readFileSync(path, 'utf8');
}
