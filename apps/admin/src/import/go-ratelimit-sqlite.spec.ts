import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
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
