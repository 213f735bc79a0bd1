import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BadGoRatelimitRowsError,
  goRatelimitDocument,
  goRatelimitDocumentFromSqlite,
  NotGoRatelimitDatabaseError,
  rfc3339Nano,
} from './go-ratelimit-sqlite';
import { NOW, plan } from './import-test-helpers';

/** go-ratelimit's schema (its sqlite.go, createSchema). */
const SCHEMA = [
  'CREATE TABLE quotas (model TEXT PRIMARY KEY, max_rpm INTEGER NOT NULL DEFAULT 0, max_tpm INTEGER NOT NULL DEFAULT 0, max_rpd INTEGER NOT NULL DEFAULT 0)',
  'CREATE TABLE requests (model TEXT NOT NULL, ts INTEGER NOT NULL)',
  'CREATE TABLE tokens (model TEXT NOT NULL, ts INTEGER NOT NULL, count INTEGER NOT NULL)',
  'CREATE TABLE daily (model TEXT PRIMARY KEY, day_start INTEGER NOT NULL, day_count INTEGER NOT NULL DEFAULT 0)',
];
/** Unix ns of NOW - `ms`, with sub-millisecond digits a double would lose. */
const ns = (ms: number): bigint => BigInt(NOW - ms) * 1_000_000n + 123_456n;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'go-ratelimit-sqlite-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function database(fill: (db: Database.Database) => void, schema = SCHEMA): string {
  const path = join(dir, 'ratelimits.db');
  const db = new Database(path);
  for (const statement of schema) db.exec(statement);
  fill(db);
  db.close();
  return path;
}

describe('rfc3339Nano', () => {
  it.each<[bigint, string | undefined]>([
    [1_763_719_201_123_456_789n, '2025-11-21T10:00:01.123456789Z'],
    [1_000_000_000n, '1970-01-01T00:00:01.000000000Z'],
    [0n, undefined],
    // Go's zero time.Time, whose UnixNano overflows.
    [-6_795_364_578_871_345_152n, undefined],
  ])('%s is %s', (value, text) => {
    expect(rfc3339Nano(value)).toBe(text);
  });
});

describe("go-ratelimit's SQLite state as the document importConfig reads", () => {
  it('carries quotas, the last minute of requests and tokens, and the day, to the nanosecond', () => {
    const path = database((db) => {
      db.prepare('INSERT INTO quotas VALUES (?, ?, ?, ?)').run('my-llama', 30, 5000, 100);
      db.prepare('INSERT INTO quotas VALUES (?, ?, ?, ?)').run('gpt-4o', 7, 3000, 0);
      const request = db.prepare('INSERT INTO requests VALUES (?, ?)');
      for (const ago of [90_000, 10_000, 2_000]) request.run('my-llama', ns(ago));
      const tokens = db.prepare('INSERT INTO tokens VALUES (?, ?, ?)');
      tokens.run('my-llama', ns(70_000), 999);
      tokens.run('my-llama', ns(10_000), 1200);
      db.prepare('INSERT INTO daily VALUES (?, ?, ?)').run('my-llama', ns(3_600_000), 9);
    });
    const document = goRatelimitDocumentFromSqlite(path, NOW);
    expect(document).toContain(rfc3339Nano(ns(2_000)));

    const imported = plan(document, 'yaml', undefined, NOW);
    expect(imported).toMatchObject({
      source: 'go-ratelimit',
      quotas: [expect.objectContaining({ name: 'my-llama' })],
      models: [{ provider: 'openai', model: { model: 'gpt-4o', maxRpm: 7, maxTpm: 3000 } }],
      usage: [{ quota: 'my-llama', key: 'my-llama', cost: { requests: 2, tokens: 1200 } }],
    });
    expect(imported.notes.join('\n')).toContain('go-ratelimit counted 9 requests in its day');
  });

  it('reads an empty database as an empty document', () => {
    const document = goRatelimitDocumentFromSqlite(
      database(() => undefined),
      NOW,
    );
    expect(plan(document)).toMatchObject({ source: 'go-ratelimit', quotas: [], usage: [] });
  });

  it('refuses a database without go-ratelimit’s tables, naming them', () => {
    const path = database(() => undefined, [SCHEMA[0]!, SCHEMA[1]!]);
    expect(() => goRatelimitDocumentFromSqlite(path)).toThrow(NotGoRatelimitDatabaseError);
    expect(() => goRatelimitDocumentFromSqlite(path)).toThrow('table tokens, daily missing');
  });

  it('refuses a path that is not a database file', () => {
    expect(() => goRatelimitDocumentFromSqlite(join(dir, 'absent.db'))).toThrow();
  });

  it('takes a YAML file as it is, and a SQLite file by its header', () => {
    const yaml = join(dir, 'ratelimits.yaml');
    writeFileSync(yaml, 'quotas:\n  m: { max_rpm: 3 }\n');
    expect(goRatelimitDocument(yaml)).toBe('quotas:\n  m: { max_rpm: 3 }\n');
    const sqlite = database((db) => {
      db.prepare('INSERT INTO quotas VALUES (?, ?, ?, ?)').run('m', 3, 0, 0);
    });
    expect(plan(goRatelimitDocument(sqlite, NOW)).quotas).toEqual([
      expect.objectContaining({ name: 'm' }),
    ]);
  });
});

/** go-ratelimit's tables without types or constraints: SQLite then keeps any value as given. */
const LOOSE_SCHEMA = [
  'CREATE TABLE quotas (model, max_rpm, max_tpm, max_rpd)',
  'CREATE TABLE requests (model, ts)',
  'CREATE TABLE tokens (model, ts, count)',
  'CREATE TABLE daily (model, day_start, day_count)',
];

/** The problems a database is refused with (it must be refused). */
function problemsOf(path: string): readonly string[] {
  try {
    goRatelimitDocumentFromSqlite(path, NOW);
  } catch (error) {
    if (error instanceof BadGoRatelimitRowsError) return error.problems;
    throw error;
  }
  throw new Error('the database was read');
}

describe('hostile SQLite state', () => {
  const INHERITED_NAMES = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString'];

  it('reads models named like inherited properties as models, and pollutes no prototype', () => {
    const path = database((db) => {
      for (const model of INHERITED_NAMES) {
        db.prepare('INSERT INTO quotas VALUES (?, ?, ?, ?)').run(model, 5, 100, 0);
        db.prepare('INSERT INTO requests VALUES (?, ?)').run(model, ns(1_000));
        db.prepare('INSERT INTO tokens VALUES (?, ?, ?)').run(model, ns(1_000), 7);
        db.prepare('INSERT INTO daily VALUES (?, ?, ?)').run(model, ns(3_600_000), 9);
      }
    });
    const imported = plan(goRatelimitDocumentFromSqlite(path, NOW));
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toEqual(
      expect.arrayContaining(['day_start']),
    );
    expect(({} as Record<string, unknown>)['day_count']).toBeUndefined();
    expect(imported.quotas.map((quota) => quota.name).sort()).toEqual([...INHERITED_NAMES].sort());
    expect(imported.usage).toHaveLength(INHERITED_NAMES.length);
    for (const model of INHERITED_NAMES) {
      expect(imported.usage).toContainEqual({
        quota: model,
        key: model,
        cost: { requests: 1, tokens: 7 },
      });
    }
  });

  it('refuses a text timestamp, naming table, row and column, and reads nothing', () => {
    const path = database((db) => {
      db.prepare('INSERT INTO quotas VALUES (?, ?, ?, ?)').run('m', 5, 0, 0);
      db.prepare('INSERT INTO requests VALUES (?, ?)').run('m', ns(1_000));
      db.prepare('INSERT INTO requests VALUES (?, ?)').run('m', '2026-11-21T10:00:29Z');
    });
    expect(() => goRatelimitDocumentFromSqlite(path, NOW)).toThrow(
      'table requests, row 2, column ts: must be an integer (Unix nanoseconds), ' +
        'not the text "2026-11-21T10:00:29Z"',
    );
    expect(() => goRatelimitDocumentFromSqlite(path, NOW)).toThrow('nothing was imported');
  });

  it.each<[string, string, unknown[], string]>([
    [
      'a number too big',
      'INSERT INTO quotas VALUES (?, ?, ?, ?)',
      ['m', 2n ** 60n, 0, 0],
      'table quotas, row 1, column max_rpm: must be an integer in 0..2^53 - 1, not the integer 1152921504606846976',
    ],
    [
      'a negative number',
      'INSERT INTO quotas VALUES (?, ?, ?, ?)',
      ['m', 5, 0, -1n],
      'table quotas, row 1, column max_rpd: must be an integer in 0..2^53 - 1, not the integer -1',
    ],
    [
      'a real',
      'INSERT INTO quotas VALUES (?, ?, ?, ?)',
      ['m', 5, 1.5, 0],
      'table quotas, row 1, column max_tpm: must be an integer in 0..2^53 - 1, not the real 1.5',
    ],
    [
      'an infinite real',
      'INSERT INTO tokens VALUES (?, ?, ?)',
      ['m', ns(1_000), Infinity],
      'table tokens, row 1, column count: must be an integer in 0..2^53 - 1, not the real Infinity',
    ],
    [
      'NaN (SQLite stores it as NULL)',
      'INSERT INTO daily VALUES (?, ?, ?)',
      ['m', ns(1_000), NaN],
      'table daily, row 1, column day_count: must be an integer in 0..2^53 - 1, not NULL',
    ],
    [
      'a text day_start',
      'INSERT INTO daily VALUES (?, ?, ?)',
      ['m', 'today', 3],
      'table daily, row 1, column day_start: must be an integer (Unix nanoseconds), not the text "today"',
    ],
    [
      'a model that is not text',
      'INSERT INTO requests VALUES (?, ?)',
      [Buffer.from('m'), ns(1_000)],
      'table requests, row 1, column model: must be text (a model name), not a blob of 1 bytes',
    ],
    [
      'a text count in an old row',
      'INSERT INTO tokens VALUES (?, ?, ?)',
      ['m', ns(3_600_000), 'many'],
      'table tokens, row 1, column count: must be an integer in 0..2^53 - 1, not the text "many"',
    ],
  ])('refuses %s, naming table, row and column', (_what, insert, values, problem) => {
    const path = database((db) => db.prepare(insert).run(...values), LOOSE_SCHEMA);
    expect(problemsOf(path)).toEqual([problem]);
  });

  it('refuses a model given two rows of quotas, which go-ratelimit keys by model', () => {
    const path = database((db) => {
      db.prepare('INSERT INTO quotas VALUES (?, ?, ?, ?)').run('m', 5, 0, 0);
      db.prepare('INSERT INTO quotas VALUES (?, ?, ?, ?)').run('m', 500, 0, 0);
    }, LOOSE_SCHEMA);
    expect(problemsOf(path)).toEqual([
      'table quotas, row 2, column model: names the model of row 1 again (one row per model), not the text "m"',
    ]);
  });

  it('names the first 20 problems and counts the others', () => {
    const path = database((db) => {
      const insert = db.prepare('INSERT INTO requests VALUES (?, ?)');
      for (let i = 0; i < 25; i++) insert.run('m', `t${i}`);
    }, LOOSE_SCHEMA);
    expect(problemsOf(path)).toHaveLength(20);
    expect(() => goRatelimitDocumentFromSqlite(path, NOW)).toThrow(/\n {2}and 5 more$/);
  });

  it('refuses a table without one of go-ratelimit’s columns, naming it', () => {
    const path = database(
      () => undefined,
      [...LOOSE_SCHEMA.slice(0, 2), 'CREATE TABLE tokens (model, ts)', LOOSE_SCHEMA[3]!],
    );
    expect(() => goRatelimitDocumentFromSqlite(path)).toThrow(NotGoRatelimitDatabaseError);
    expect(() => goRatelimitDocumentFromSqlite(path)).toThrow('table tokens has no column count');
  });
});
