/**
 * Per-key persistence against real SQLite and the real store thread, in this process: the
 * limiter service and its persistence service on a virtual clock, saves called by the test
 * (no waiting for the 5 s timer). Issue 11 point 1: a save writes only the keys that changed, in
 * slices across event-loop turns, and keeps what a restart needs.
 */
import type { QuotaSpec } from '@app/contracts';
import { Engine, VirtualClock } from '@app/engine';
import Database from 'better-sqlite3';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LimiterService } from '../apps/limiter/src/engine-host/limiter.service';
import {
  PersistenceService,
  SLICE_ROWS,
} from '../apps/limiter/src/ops/persistence/persistence.service';
import { DATABASE_FILE } from '../apps/limiter/src/ops/persistence/usage-store';
import { readLimiterSettings } from '../apps/limiter/src/settings/limiter-settings';

const T0 = 1_800_000_000_000; // a multiple of one minute
const MINUTE = 60_000;

const perMinute: QuotaSpec = {
  name: 'pm',
  limits: [
    { name: 'rpm', unit: 'requests', limit: 5, windowMs: MINUTE, algorithm: 'fixed_window' },
  ],
};
const leased: QuotaSpec = {
  name: 'leased',
  limits: [
    { name: 'rpm', unit: 'requests', limit: 100, windowMs: MINUTE, algorithm: 'fixed_window' },
  ],
  concurrency: { max: 1, leaseTtlMs: 10 * MINUTE },
};

interface Running {
  limiter: LimiterService;
  persistence: PersistenceService;
}

let dir: string;
let clock: VirtualClock;
const running: Running[] = [];

async function open(quotas: readonly QuotaSpec[]): Promise<Running> {
  const settings = readLimiterSettings({ NATS_URL: '', DATA_DIR: dir, SHARDS: '4' });
  const limiter = new LimiterService(settings, clock);
  limiter.setQuotas(quotas);
  const persistence = new PersistenceService(settings, limiter, clock);
  await persistence.start();
  const r = { limiter, persistence };
  running.push(r);
  return r;
}

async function close(r: Running): Promise<void> {
  running.splice(running.indexOf(r), 1);
  await r.limiter.onModuleDestroy();
  await r.persistence.stop();
}

async function admitted(r: Running, key: string, n: number, quota = 'pm'): Promise<number> {
  let count = 0;
  for (let i = 0; i < n; i++)
    if ((await r.limiter.acquire({ key, quota, cost: { requests: 1 } })).allowed) count++;
  return count;
}

function acquireMany(r: Running, keys: number, quota = 'pm', prefix = 'k'): void {
  for (let i = 0; i < keys; i++)
    r.limiter.engine.acquire({ key: `${prefix}${i}`, quota }, clock.now());
}

/** Reads the database file as another process would. */
function query<T>(sql: string, ...params: unknown[]): T[] {
  const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Every write to key_state fails from now on (as on a full disk), or no longer does. */
function failWrites(fail: boolean): void {
  const db = new Database(join(dir, DATABASE_FILE));
  try {
    if (fail) {
      for (const op of ['INSERT', 'UPDATE']) {
        db.exec(`CREATE TRIGGER full_${op} BEFORE ${op} ON key_state
          BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
      }
    } else {
      db.exec('DROP TRIGGER full_INSERT; DROP TRIGGER full_UPDATE');
    }
  } finally {
    db.close();
  }
}

const storedKeys = (quota = 'pm'): string[] =>
  query<{ key: string }>('SELECT key FROM key_state WHERE quota = ? ORDER BY key', quota).map(
    (r) => r.key,
  );

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'limiter-persist-keys-'));
  clock = new VirtualClock(T0);
});

afterEach(async () => {
  for (const r of [...running]) await close(r);
  rmSync(dir, { recursive: true, force: true });
});

jest.setTimeout(60_000);

describe('per-key persistence (real SQLite, store thread)', () => {
  it('a save writes only the keys that changed since the last one', async () => {
    const r = await open([perMinute]);
    acquireMany(r, 1000);
    await r.persistence.persist();
    expect(r.persistence.stats.rowsWritten).toBe(1000);

    clock.advance(1000);
    for (const key of ['k1', 'k500', 'k999']) await admitted(r, key, 1);
    await r.persistence.persist();
    expect(r.persistence.stats.rowsWritten).toBe(1003);
    const rewritten = query<{ key: string }>(
      'SELECT key FROM key_state WHERE taken_at = ? ORDER BY key',
      clock.now(),
    );
    expect(rewritten.map((row) => row.key)).toEqual(['k1', 'k500', 'k999']);

    // Nothing changed: nothing is written.
    await r.persistence.persist();
    expect(r.persistence.stats.rowsWritten).toBe(1003);
  });

  it('collects a large save in slices, yielding to the event loop between them', async () => {
    const r = await open([perMinute]);
    const keys = 10 * SLICE_ROWS;
    acquireMany(r, keys);
    let turns = 0;
    let saving = true;
    const count = (): void => {
      turns++;
      if (saving) setImmediate(count);
    };
    setImmediate(count);
    await r.persistence.persist();
    saving = false;
    expect(r.persistence.stats.rowsWritten).toBe(keys);
    expect(turns).toBeGreaterThanOrEqual(keys / SLICE_ROWS - 1);
  });

  it('keeps counts across a restart, and does not write restored keys again', async () => {
    const first = await open([perMinute]);
    expect(await admitted(first, 'alice', 3)).toBe(3);
    acquireMany(first, 100);
    await close(first);

    clock.advance(1000);
    const second = await open([perMinute]);
    expect(await admitted(second, 'alice', 5)).toBe(2);
    expect(await admitted(second, 'k7', 5)).toBe(4);
    await second.persistence.persist();
    expect(second.persistence.stats.rowsWritten).toBe(2); // alice and k7, not the 99 others
  });

  it('writes only what changed since the last save on shutdown', async () => {
    const r = await open([perMinute]);
    acquireMany(r, 500);
    await r.persistence.persist();
    await admitted(r, 'k3', 1);
    await admitted(r, 'late', 1);
    await r.limiter.onModuleDestroy();
    await r.persistence.stop();
    running.splice(running.indexOf(r), 1);
    expect(r.persistence.stats.rowsWritten).toBe(502);
    expect(storedKeys()).toContain('late');
  });

  it('keeps concurrency leases across a restart', async () => {
    const first = await open([leased]);
    const held = await first.limiter.acquire({
      key: 'job',
      quota: 'leased',
      cost: { requests: 1 },
    });
    expect(held.leaseId).toBeDefined();
    await close(first);

    clock.advance(MINUTE); // the lease lives 10 minutes
    const second = await open([leased]);
    expect(
      (await second.limiter.acquire({ key: 'job', quota: 'leased', cost: { requests: 1 } })).code,
    ).toBe('CONCURRENCY_LIMITED');
    expect(second.limiter.release({ key: 'job', quota: 'leased', leaseId: held.leaseId })).toEqual({
      ok: true,
      value: true,
    });
    expect(
      (await second.limiter.acquire({ key: 'job', quota: 'leased', cost: { requests: 1 } }))
        .allowed,
    ).toBe(true);
  });

  it('deletes stored keys that went idle, and keys reset since their last save', async () => {
    const r = await open([perMinute]);
    acquireMany(r, 50);
    await r.persistence.persist();
    expect(storedKeys()).toHaveLength(50);

    expect(r.limiter.resetKey({ key: 'k0', quota: 'pm' })).toEqual({ ok: true, value: true });
    await r.persistence.persist();
    expect(storedKeys()).toHaveLength(49);
    expect(storedKeys()).not.toContain('k0');

    clock.advance(MINUTE + 1000); // the window ended: every stored key is idle
    r.limiter.engine.advance(clock.now());
    await r.persistence.persist(); // nothing to write; its sweep deletes the idle keys
    expect(storedKeys()).toEqual([]);
  });

  it('writes the keys of a failed save at the next one', async () => {
    const r = await open([perMinute]);
    acquireMany(r, 4 * SLICE_ROWS);
    const saving = r.persistence.persist();
    // The store thread dies while the save is under way.
    await new Promise((resolve) => setImmediate(resolve));
    const thread = (r.persistence as unknown as { thread: { terminate(): Promise<void> } }).thread;
    await thread.terminate();
    await saving;
    expect(r.persistence.stats.failures).toBe(1);

    await r.persistence.persist();
    expect(storedKeys()).toHaveLength(4 * SLICE_ROWS);
  });

  it('after a failed save, writes the keys it held and those changed since, not every key', async () => {
    const r = await open([perMinute]);
    acquireMany(r, 1000);
    await r.persistence.persist();
    expect(r.persistence.stats.rowsWritten).toBe(1000);

    clock.advance(1000);
    for (const key of ['k1', 'k2', 'k3']) await admitted(r, key, 1);
    failWrites(true);
    await r.persistence.persist();
    expect(r.persistence.stats).toMatchObject({ failures: 1, rowsWritten: 1000 });
    // Still failing: the same three again, not the 1000.
    await admitted(r, 'k4', 1);
    failWrites(false);
    failWrites(true);
    await r.persistence.persist();
    expect(r.persistence.stats.failures).toBe(2);

    failWrites(false);
    await admitted(r, 'k5', 1);
    await r.persistence.persist();
    expect(r.persistence.stats.rowsWritten).toBe(1000 + 5);
    const rewritten = query<{ key: string }>(
      'SELECT key FROM key_state WHERE taken_at = ? ORDER BY key',
      clock.now(),
    );
    expect(rewritten.map((row) => row.key)).toEqual(['k1', 'k2', 'k3', 'k4', 'k5']);
  });

  it('purges a deleted quota at the next save when the save that purged it failed', async () => {
    const other: QuotaSpec = { ...perMinute, name: 'other' };
    const r = await open([perMinute, other]);
    acquireMany(r, 10, 'other');
    await r.persistence.persist();
    r.limiter.setQuotas([perMinute]);
    await admitted(r, 'k1', 1);
    failWrites(true);
    await r.persistence.persist();
    expect(r.persistence.stats.failures).toBe(1);
    failWrites(false);
    await r.persistence.persist();
    expect(query("SELECT id FROM quota_layout WHERE quota = 'other'")).toEqual([]);
  });

  it('forgets a quota deleted while running, also when it is defined again', async () => {
    const r = await open([perMinute]);
    acquireMany(r, 20);
    await r.persistence.persist();
    r.limiter.setQuotas([]);
    r.limiter.setQuotas([perMinute]); // a new quota of the same name: it starts empty
    await admitted(r, 'fresh', 1);
    await close(r);

    const again = await open([perMinute]);
    expect(await admitted(again, 'k1', 5)).toBe(5);
    expect(await admitted(again, 'fresh', 5)).toBe(4);
  });

  it('restores a stored quota the config brings back later, in slices', async () => {
    const first = await open([perMinute]);
    const keys = 3 * SLICE_ROWS;
    acquireMany(first, keys);
    await close(first);

    const second = await open([]); // a config without the quota: its keys stay stored
    await second.persistence.persist();
    expect(storedKeys()).toHaveLength(keys);
    second.limiter.setQuotas([perMinute]);
    second.persistence.restorePending();
    const deadline = Date.now() + 10_000;
    while (second.limiter.engine.footprint().keys < keys && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(second.limiter.engine.footprint().keys).toBe(keys);
    expect(await admitted(second, `k${keys - 1}`, 5)).toBe(4);
  });

  it('converts the old one-snapshot-per-quota table at the first start', async () => {
    // What the previous version wrote: schema 1, a QuotaSnapshot as JSON per quota.
    const old = new Engine([perMinute, leased]);
    for (let i = 0; i < 3; i++) old.acquire({ key: 'alice', quota: 'pm' }, T0);
    const lease = old.acquire({ key: 'job', quota: 'leased' }, T0);
    mkdirSync(dir, { recursive: true });
    const db = new Database(join(dir, DATABASE_FILE));
    db.exec(
      'CREATE TABLE quota_snapshot (quota TEXT PRIMARY KEY, taken_at INTEGER NOT NULL, snapshot TEXT NOT NULL) STRICT',
    );
    db.pragma('user_version = 1');
    const insert = db.prepare('INSERT INTO quota_snapshot VALUES (?, ?, ?)');
    for (const q of old.snapshot(T0).quotas) insert.run(q.name, T0, JSON.stringify(q));
    insert.run('broken', T0, '{"name":"broken"}');
    db.close();

    clock.advance(1000);
    const r = await open([perMinute, leased]);
    expect(await admitted(r, 'alice', 5)).toBe(2);
    expect(
      (await r.limiter.acquire({ key: 'job', quota: 'leased', cost: { requests: 1 } })).code,
    ).toBe('CONCURRENCY_LIMITED');
    expect('leaseId' in lease && lease.leaseId).toBeTruthy();
    expect(query("SELECT name FROM sqlite_master WHERE name = 'quota_snapshot'")).toEqual([]);
    expect(query<{ user_version: number }>('PRAGMA user_version')[0]?.user_version).toBe(2);
    expect(storedKeys()).toEqual(['alice']);
  });

  it('moves a file damaged inside aside (found by the check run beside the restore)', async () => {
    const first = await open([perMinute]);
    acquireMany(first, 5000);
    await close(first);
    // Garbage over pages in the middle of the file: it opens, but its B-tree is broken.
    const fd = openSync(join(dir, DATABASE_FILE), 'r+');
    writeSync(fd, Buffer.alloc(4096 * 4, 0x5a), 0, 4096 * 4, 4096 * 10);
    closeSync(fd);

    const second = await open([perMinute]);
    expect(readdirSync(dir).some((f) => f.startsWith(`${DATABASE_FILE}.damaged-`))).toBe(true);
    expect(second.persistence.stats.enabled).toBe(true);
    expect(second.limiter.engine.footprint().keys).toBe(0);
    acquireMany(second, 10);
    await second.persistence.persist();
    expect(storedKeys()).toHaveLength(10);
  });

  it('leaves out stored keys whose numbers are impossible, and counts them (issue 25 point 5)', async () => {
    const first = await open([perMinute, leased]);
    for (const key of ['end', 'half', 'nan', 'neg', 'ok'])
      expect(await admitted(first, key, 2)).toBe(2);
    const lease = await first.limiter.acquire({
      key: 'job',
      quota: 'leased',
      cost: { requests: 1 },
    });
    expect(lease.leaseId).toBeDefined();
    await close(first);

    // Row of pm: [statsWindow, approved, denied, windowStart, windowEnd, used].
    const db = new Database(join(dir, DATABASE_FILE));
    const edit = (key: string, change: (row: Float64Array) => Float64Array): void => {
      const { state } = db
        .prepare<[string], { state: Buffer }>(
          "SELECT state FROM key_state WHERE quota = 'pm' AND key = ?",
        )
        .get(key)!;
      const row = change(new Float64Array(new Uint8Array(state).buffer));
      db.prepare("UPDATE key_state SET state = ? WHERE quota = 'pm' AND key = ?").run(
        Buffer.from(row.buffer, row.byteOffset, row.byteLength),
        key,
      );
    };
    const set = (i: number, value: number) => (row: Float64Array) => {
      row[i] = value;
      return row;
    };
    edit('neg', set(5, -1e9)); // admitted 40 of 40 on a 5/min limit
    edit('end', set(4, 8.64e15)); // locked with retryAfterMs 8.6e15
    edit('nan', set(5, NaN)); // admitted with remaining: null
    // Bytes that are not whole numbers: the keys after it must still read their own.
    db.prepare("UPDATE key_state SET state = ? WHERE quota = 'pm' AND key = 'half'").run(
      Buffer.alloc(20, 1),
    );
    db.prepare("UPDATE key_state SET leases = ? WHERE quota = 'leased'").run(
      JSON.stringify([{ id: lease.leaseId, requestId: 'r', expiresAt: 8.64e15 }]),
    );
    db.close();

    clock.advance(1000);
    const second = await open([perMinute, leased]);
    expect(second.persistence.stats.rowsUnreadable).toBe(4);
    for (const key of ['neg', 'end', 'nan', 'half'])
      expect(await admitted(second, key, 40)).toBe(5);
    const decided = await second.limiter.acquire({
      key: 'nan',
      quota: 'pm',
      cost: { requests: 0 },
    });
    expect(decided).toMatchObject({ allowed: true, remaining: 0, limit: 5 });
    expect(await admitted(second, 'ok', 5)).toBe(3); // read right after the short row
    // A lease dated past its ttl from now holds its ttl at most (10 minutes), not forever.
    const job = { key: 'job', quota: 'leased', cost: { requests: 1 } };
    expect((await second.limiter.acquire(job)).code).toBe('CONCURRENCY_LIMITED');
    clock.advance(10 * MINUTE);
    expect((await second.limiter.acquire(job)).allowed).toBe(true);
  });
});
