import { encodeEntry, type ControlSet } from '@app/contracts';
import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTROL_DATABASE_FILE, ControlStore } from './control-store';

const set: ControlSet = {
  quotas: [
    {
      spec: {
        name: 'api',
        match: 'api-*',
        limits: [
          { name: 'rps', unit: 'requests', limit: 5, windowMs: 1000, algorithm: 'fixed_window' },
        ],
      },
      version: 2,
      updatedAt: 10,
    },
  ],
  providers: [
    {
      name: 'openai',
      enabled: true,
      models: [{ model: 'gpt-4o', maxRpm: 1, maxTpm: 2, maxRpd: 0 }],
    },
  ],
};

describe('ControlStore (SQLite under DATA_DIR)', () => {
  let dir: string;
  let messages: string[];
  const log = {
    error: (m: string) => messages.push(`error ${m}`),
    warn: (m: string) => messages.push(`warn ${m}`),
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'control-store-'));
    messages = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = (): ControlStore => {
    const store = ControlStore.open(dir, log);
    if (store === undefined) throw new Error(messages.join('\n'));
    return store;
  };

  it('has no set until one is saved, then reads back the last one saved', () => {
    const store = open();
    expect(store.load(log)).toBeUndefined();
    store.save({ quotas: [], providers: [] }, 1);
    store.save(set, 2);
    store.close();
    const again = open();
    expect(again.load(log)).toEqual({ set, savedAt: 2 });
    again.close();
    expect(messages).toEqual([]);
  });

  it('keeps an empty set apart from no set at all', () => {
    const store = open();
    store.save({ quotas: [], providers: [] }, 5);
    expect(store.load(log)).toEqual({ set: { quotas: [], providers: [] }, savedAt: 5 });
    store.close();
  });

  it('moves a damaged file aside and starts without a set', () => {
    writeFileSync(
      join(dir, CONTROL_DATABASE_FILE),
      'this is not a database, just bytes '.repeat(200),
    );
    const store = open();
    expect(store.load(log)).toBeUndefined();
    store.close();
    expect(messages.join('\n')).toMatch(/is damaged .* moved to .*damaged-/);
    expect(readdirSync(dir).some((f) => f.startsWith(`${CONTROL_DATABASE_FILE}.damaged-`))).toBe(
      true,
    );
  });

  it('ignores a stored row that is not JSON, and leaves out entries that fail validation', () => {
    open().close();
    const db = new Database(join(dir, CONTROL_DATABASE_FILE));
    db.prepare('INSERT INTO control_set (id, saved_at, entries) VALUES (1, 1, ?)').run('{oops');
    db.close();
    expect(open().load(log)).toBeUndefined();
    expect(messages.join('\n')).toContain('is not JSON');

    messages = [];
    const good = encodeEntry({ kind: 'quota', quota: set.quotas[0]! });
    const bad = { key: 'quota.00', value: '{"spec":{}}' };
    const db2 = new Database(join(dir, CONTROL_DATABASE_FILE));
    db2
      .prepare('UPDATE control_set SET entries = ? WHERE id = 1')
      .run(JSON.stringify([good, bad, 7]));
    db2.close();
    expect(open().load(log)).toEqual({ set: { quotas: set.quotas, providers: [] }, savedAt: 1 });
    expect(messages).toHaveLength(2);
    expect(messages[0]).toContain('stored entry left out: quota.00:');
    expect(messages[1]).toContain('not a { key, value } entry');
  });

  it('reads a set whose saved_at is no instant without it (a Date of it would throw)', () => {
    const store = open();
    store.save(set, 2);
    store.close();
    const db = new Database(join(dir, CONTROL_DATABASE_FILE));
    db.prepare('UPDATE control_set SET saved_at = ? WHERE id = 1').run(2n ** 62n);
    db.close();
    expect(open().load(log)).toEqual({ set, savedAt: undefined });
    expect(messages.join('\n')).toContain('saved_at: not an instant');
  });

  it('answers undefined when DATA_DIR cannot be created', () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    expect(ControlStore.open(join(file, 'below'), log)).toBeUndefined();
    expect(messages.join('\n')).toContain('will not survive a restart');
  });
});
