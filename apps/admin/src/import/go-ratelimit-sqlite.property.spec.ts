import Database from 'better-sqlite3';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@app/contracts';
import { parse } from 'yaml';
import { BadGoRatelimitRowsError, goRatelimitDocumentFromSqlite } from './go-ratelimit-sqlite';
import { NOW, plan } from './import-test-helpers';

/**
 * Whatever go-ratelimit's SQLite file holds, reading it answers a document (which the import reads
 * into a plan or a ConfigError) or BadGoRatelimitRowsError naming table, row and column: nothing
 * else is thrown, and no prototype is touched whatever the model names.
 */

/** Tables without types: SQLite keeps each value as given (text, real, NULL, blob). */
const SCHEMA = [
  'CREATE TABLE quotas (model, max_rpm, max_tpm, max_rpd)',
  'CREATE TABLE requests (model, ts)',
  'CREATE TABLE tokens (model, ts, count)',
  'CREATE TABLE daily (model, day_start, day_count)',
];
const INSERT = {
  quotas: 'INSERT INTO quotas VALUES (?, ?, ?, ?)',
  requests: 'INSERT INTO requests VALUES (?, ?)',
  tokens: 'INSERT INTO tokens VALUES (?, ?, ?)',
  daily: 'INSERT INTO daily VALUES (?, ?, ?)',
} as const;
type Table = keyof typeof INSERT;
type Rows = Record<Table, unknown[][]>;
const PROBLEM = /^table (quotas|requests|tokens|daily), row \d+, column (\w+): .+, not .+$/s;

const modelName = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'hasOwnProperty',
    'valueOf',
    'toString',
    'm',
    'gpt-4o',
    'default',
  ),
  fc.string({ maxLength: 8 }),
);
const count = fc.bigInt(0n, 10_000n);
/** Unix ns within two minutes of NOW, with sub-millisecond digits. */
const nanos = fc
  .bigInt(-120_000_000_000n, 120_000_000_000n)
  .map((ns) => BigInt(NOW) * 1_000_000n + ns);
/** Any SQLite value: integers of any size, reals (NaN is stored as NULL), text, NULL, blobs. */
const anyValue = fc.oneof(
  fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n),
  fc.double(),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('2026-11-21T10:00:29Z', '1763719201123456789', ''),
  fc.constant(null),
  fc.uint8Array({ maxLength: 4 }).map((bytes) => Buffer.from(bytes)),
);
const maybeHostile = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: anyValue, weight: 1 });

function rowsOf(value: <T>(valid: fc.Arbitrary<T>) => fc.Arbitrary<unknown>) {
  return fc.record<Rows>({
    quotas: fc.array(fc.tuple(value(modelName), value(count), value(count), value(count)), {
      maxLength: 6,
    }),
    requests: fc.array(fc.tuple(value(modelName), value(nanos)), { maxLength: 10 }),
    tokens: fc.array(fc.tuple(value(modelName), value(nanos), value(count)), { maxLength: 10 }),
    daily: fc.array(fc.tuple(value(modelName), value(nanos), value(count)), { maxLength: 6 }),
  });
}

let dir: string;
let runs = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'go-ratelimit-sqlite-property-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function database(rows: Rows): string {
  const path = join(dir, `${runs++}.db`);
  const db = new Database(path);
  // A scratch file: no journal, no fsync.
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.transaction(() => {
    for (const statement of SCHEMA) db.exec(statement);
    for (const table of Object.keys(INSERT) as Table[]) {
      const insert = db.prepare(INSERT[table]);
      for (const row of rows[table]) insert.run(...row);
    }
  })();
  db.close();
  return path;
}

/** The document, or the problems it was refused with; no prototype may change meanwhile. */
function read(rows: Rows): string | readonly string[] {
  const before = Object.getOwnPropertyNames(Object.prototype);
  try {
    return goRatelimitDocumentFromSqlite(database(rows), NOW);
  } catch (error) {
    if (!(error instanceof BadGoRatelimitRowsError)) throw error;
    return error.problems;
  } finally {
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(before);
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  }
}

describe("properties of reading go-ratelimit's SQLite state", () => {
  it('any values: a document the import reads, or named problems', () => {
    fc.assert(
      fc.property(rowsOf(maybeHostile), (rows) => {
        const read_ = read(rows);
        if (typeof read_ !== 'string') {
          expect(read_.length).toBeGreaterThan(0);
          for (const problem of read_) expect(problem).toMatch(PROBLEM);
          return;
        }
        try {
          plan(read_);
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
        }
      }),
      { numRuns: 150 },
    );
  });

  it('values go-ratelimit writes: every model of `quotas` in the document, by its name', () => {
    fc.assert(
      fc.property(
        rowsOf(<T>(valid: fc.Arbitrary<T>) => valid),
        (rows) => {
          // go-ratelimit keys quotas and daily by model: one row each.
          const once = (table: unknown[][]) =>
            table.filter((row, i) => table.findIndex((other) => other[0] === row[0]) === i);
          const valid = { ...rows, quotas: once(rows.quotas), daily: once(rows.daily) };
          const document = read(valid);
          expect(typeof document).toBe('string');
          const parsed = parse(document as string) as { quotas: object };
          expect(Object.keys(parsed.quotas).sort()).toEqual(
            valid.quotas.map((row) => row[0] as string).sort(),
          );
        },
      ),
      { numRuns: 100 },
    );
  });
});
