import Database from 'better-sqlite3';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { stringify } from 'yaml';

/**
 * go-ratelimit's SQLite backend (`backend: sqlite`, its sqlite.go) as the `ratelimits.yaml` that
 * importConfig reads: table `quotas` becomes `quotas`, tables `requests`, `tokens` and `daily`
 * become `state`. Times there are Unix nanoseconds, beyond a double's 53 bits, so they are read
 * as BigInt and written as RFC 3339 with all nine fraction digits, as Go's yaml.v3 writes them.
 */

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;
const TABLES = ['quotas', 'requests', 'tokens', 'daily'] as const;

export class NotGoRatelimitDatabaseError extends Error {}

interface ModelState {
  requests: string[];
  tokens: { time: string; count: number }[];
  day_start?: string;
  day_count?: number;
}

/** `2026-11-21T10:00:01.123456789Z`; undefined for Go's zero time and other instants before 1970. */
export function rfc3339Nano(ns: bigint): string | undefined {
  if (ns <= 0n) return undefined;
  const seconds = new Date(Number(ns / NS_PER_MS)).toISOString().slice(0, 19);
  return `${seconds}.${(ns % NS_PER_S).toString().padStart(9, '0')}Z`;
}

function toNumber(value: bigint): number {
  return Number(value);
}

/**
 * The document for the state of `path` at `nowMs`. Requests and tokens older than a minute are
 * left out, as the import counts only the last minute (and go-ratelimit prunes them too), which
 * keeps the document small; `daily` is kept whole, for the import's note on the day's count.
 */
export function goRatelimitDocumentFromSqlite(path: string, nowMs = Date.now()): string {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const present = new Set(
      db
        .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((row) => row.name),
    );
    const missing = TABLES.filter((table) => !present.has(table));
    if (missing.length > 0) {
      throw new NotGoRatelimitDatabaseError(
        `${path} is not go-ratelimit's SQLite state: table ${missing.join(', ')} missing`,
      );
    }
    const since = (BigInt(nowMs) - 60_000n) * NS_PER_MS;
    const quotas: Record<string, { max_rpm: number; max_tpm: number; max_rpd: number }> = {};
    const state: Record<string, ModelState> = {};
    const stateOf = (model: string): ModelState => (state[model] ??= { requests: [], tokens: [] });

    const quotaRows = db
      .prepare('SELECT model, max_rpm, max_tpm, max_rpd FROM quotas ORDER BY model')
      .safeIntegers(true)
      .all() as { model: string; max_rpm: bigint; max_tpm: bigint; max_rpd: bigint }[];
    for (const row of quotaRows) {
      quotas[row.model] = {
        max_rpm: toNumber(row.max_rpm),
        max_tpm: toNumber(row.max_tpm),
        max_rpd: toNumber(row.max_rpd),
      };
    }
    const dailyRows = db
      .prepare('SELECT model, day_start, day_count FROM daily ORDER BY model')
      .safeIntegers(true)
      .all() as { model: string; day_start: bigint; day_count: bigint }[];
    for (const row of dailyRows) {
      const dayStart = rfc3339Nano(row.day_start);
      if (dayStart === undefined) continue;
      Object.assign(stateOf(row.model), {
        day_start: dayStart,
        day_count: toNumber(row.day_count),
      });
    }
    const requestRows = db
      .prepare('SELECT model, ts FROM requests WHERE ts > ? ORDER BY ts')
      .safeIntegers(true)
      .all(since) as { model: string; ts: bigint }[];
    for (const row of requestRows) {
      const time = rfc3339Nano(row.ts);
      if (time !== undefined) stateOf(row.model).requests.push(time);
    }
    const tokenRows = db
      .prepare('SELECT model, ts, count FROM tokens WHERE ts > ? ORDER BY ts')
      .safeIntegers(true)
      .all(since) as { model: string; ts: bigint; count: bigint }[];
    for (const row of tokenRows) {
      const time = rfc3339Nano(row.ts);
      if (time !== undefined) stateOf(row.model).tokens.push({ time, count: toNumber(row.count) });
    }
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
