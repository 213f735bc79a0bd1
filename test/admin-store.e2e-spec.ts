import { BUILT_IN_PROVIDERS, type QuotaSpec } from '@app/contracts';
import { Global, Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_SETTINGS, readAdminSettings } from '../apps/admin/src/settings/admin-settings';
import {
  ADMIN_DATABASE_FILE,
  AdminStore,
  MatchTakenError,
  openStoreOrm,
  STORE_ORM,
  StoreModule,
  type StoreClock,
  type StoreOrm,
} from '../apps/admin/src/store';
import { QuotaRow } from '../apps/admin/src/store/entities';
import { STORE_MIGRATIONS } from '../apps/admin/src/store/migrations';

/** Time set by hand. */
class HandClock implements StoreClock {
  constructor(public t = 1_000) {}
  now(): number {
    return this.t;
  }
}

/** forRoot(settings, clock); global settings + forRoot(undefined, clock); plain StoreModule. */
type How = 'forRoot' | 'global' | 'plain';

interface Opened {
  readonly moduleRef: INestApplicationContext;
  readonly store: AdminStore;
  readonly orm: StoreOrm;
}

/** As the app module will do it: ADMIN_SETTINGS provided by a @Global() module. */
function globalSettingsModule(dataDir: string) {
  @Global()
  @Module({
    providers: [
      { provide: ADMIN_SETTINGS, useValue: readAdminSettings({ DATA_DIR: dataDir, NATS_URL: '' }) },
    ],
    exports: [ADMIN_SETTINGS],
  })
  class SettingsModule {}
  return SettingsModule;
}

async function open(dataDir: string, clock: StoreClock, how: How = 'forRoot'): Promise<Opened> {
  const imports =
    how === 'forRoot'
      ? [StoreModule.forRoot({ dataDir }, { clock })]
      : how === 'global'
        ? [globalSettingsModule(dataDir), StoreModule.forRoot(undefined, { clock })]
        : // As the app module will import it: settings from a global module, the system clock.
          [globalSettingsModule(dataDir), StoreModule];
  @Module({ imports })
  class RootModule {}
  const moduleRef = await NestFactory.createApplicationContext(RootModule, { logger: false });
  return {
    moduleRef,
    store: moduleRef.get(AdminStore),
    orm: moduleRef.get<StoreOrm>(STORE_ORM),
  };
}

function quota(name: string, limit = 10, extra: Partial<QuotaSpec> = {}): QuotaSpec {
  return {
    name,
    limits: [{ name: 'rps', unit: 'requests', limit, windowMs: 1000, algorithm: 'fixed_window' }],
    ...extra,
  };
}

/** Reads the file with a connection of its own, as an operator would. */
function withFile<T>(dataDir: string, read: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, ADMIN_DATABASE_FILE), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

describe('AdminStore on SQLite (MikroORM)', () => {
  let root: string;
  const opened: Opened[] = [];

  async function openTracked(
    dataDir: string,
    clock: StoreClock = new HandClock(),
    how: How = 'forRoot',
  ): Promise<Opened> {
    const o = await open(dataDir, clock, how);
    opened.push(o);
    return o;
  }

  async function close(o: Opened): Promise<void> {
    opened.splice(opened.indexOf(o), 1);
    await o.moduleRef.close();
  }

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'admin-store-'));
  });

  afterEach(async () => {
    for (const o of opened.splice(0)) await o.moduleRef.close();
  });

  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  let dirs = 0;
  const freshDir = () => join(root, `case-${++dirs}`, 'nested', 'data');

  it('creates DATA_DIR and the schema by migrations, and seeds the built-in providers disabled', async () => {
    const dir = freshDir();
    expect(existsSync(dir)).toBe(false);
    const { store } = await openTracked(dir);
    expect(existsSync(join(dir, ADMIN_DATABASE_FILE))).toBe(true);

    const tables = withFile(dir, (db) =>
      (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
          name: string;
        }[]
      ).map((row) => row.name),
    );
    expect(tables).toEqual(
      expect.arrayContaining([
        'audit_entries',
        'builtin_seeds',
        'mikro_orm_migrations',
        'model_quotas',
        'providers',
        'quotas',
      ]),
    );
    const migrations = withFile(dir, (db) =>
      db.prepare('SELECT name FROM mikro_orm_migrations').all(),
    );
    expect(migrations).toEqual(STORE_MIGRATIONS.map(({ name }) => ({ name })));

    const providers = await store.providers();
    expect(providers.map((p) => p.name)).toEqual(['anthropic', 'gemini', 'local', 'openai']);
    const counts = Object.fromEntries(providers.map((p) => [p.name, p.models.length]));
    expect(counts).toEqual({ gemini: 5, openai: 6, anthropic: 3, local: 0 });
    expect(providers.every((p) => !p.enabled)).toBe(true);
    for (const profile of BUILT_IN_PROVIDERS) {
      const stored = await store.provider(profile.name);
      const expected = [...profile.models].sort((a, b) => (a.model < b.model ? -1 : 1));
      expect(stored).toEqual({ name: profile.name, enabled: false, models: expected });
    }
    expect(await store.quotas()).toEqual([]);
    expect(await store.auditLog(100)).toEqual([]);
    expect(await store.controlSet()).toEqual({ quotas: [], providers });
  });

  it('runs every connection in WAL mode with a busy timeout', async () => {
    const dir = freshDir();
    const { orm } = await openTracked(dir);
    const conn = orm.em.getConnection();
    expect(await conn.execute('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
    expect(await conn.execute('PRAGMA busy_timeout')).toEqual([{ timeout: 5000 }]);
    expect(await conn.execute('PRAGMA foreign_keys')).toEqual([{ foreign_keys: 1 }]);
    // WAL is a property of the file: a connection of its own sees it too.
    expect(withFile(dir, (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
  });

  it('versions quotas 1, 2, … with updatedAt, and audits each change with before and after', async () => {
    const clock = new HandClock(1_000);
    const { store } = await openTracked(freshDir(), clock);

    const first = await store.saveQuota(quota('api', 10, { match: 'api-*' }), 'alice');
    expect(first.changed).toBe(true);
    expect(first.before).toBeUndefined();
    expect(first.after).toEqual({
      spec: quota('api', 10, { match: 'api-*' }),
      version: 1,
      updatedAt: 1_000,
    });

    clock.t = 2_000;
    const second = await store.saveQuota(quota('api', 20, { match: 'api-*' }), 'bob');
    expect(second.before).toEqual(first.after);
    expect(second.after).toEqual({
      spec: quota('api', 20, { match: 'api-*' }),
      version: 2,
      updatedAt: 2_000,
    });

    // The same spec (keys in another order) is no change: no version, no audit entry.
    clock.t = 3_000;
    const same = await store.saveQuota(
      { match: 'api-*', limits: quota('api', 20).limits, name: 'api' },
      'carol',
    );
    expect(same.changed).toBe(false);
    expect(same.after).toEqual(second.after);

    expect(await store.quota('api')).toEqual(second.after);
    expect(await store.quota('nope')).toBeUndefined();

    const log = await store.auditLog(10);
    expect(log).toHaveLength(2);
    expect(log[0]).toMatchObject({
      at: 2_000,
      actor: 'bob',
      action: 'upsertQuota',
      target: 'api',
      before: first.after,
      after: second.after,
    });
    expect(log[1]).toMatchObject({
      at: 1_000,
      actor: 'alice',
      action: 'upsertQuota',
      target: 'api',
      before: null,
      after: first.after,
    });
    expect(log[0]!.id).toBeGreaterThan(log[1]!.id);
  });

  it('deletes a quota and audits it, and does nothing for a name that does not exist', async () => {
    const clock = new HandClock(5_000);
    const { store } = await openTracked(freshDir(), clock);
    const saved = await store.saveQuota(quota('gone'), 'alice');
    await store.saveQuota(quota('kept'), 'alice');

    clock.t = 6_000;
    expect(await store.deleteQuota('gone', 'bob')).toEqual(saved.after);
    expect(await store.deleteQuota('gone', 'bob')).toBeUndefined();
    expect((await store.quotas()).map((q) => q.spec.name)).toEqual(['kept']);

    const log = await store.auditLog(10);
    expect(log).toHaveLength(3);
    expect(log[0]).toMatchObject({
      at: 6_000,
      actor: 'bob',
      action: 'deleteQuota',
      target: 'gone',
      before: saved.after,
      after: null,
    });
  });

  it('sets model quotas and enabled flags, creating providers and models when missing', async () => {
    const { store } = await openTracked(freshDir());

    const created = await store.setModelQuota(
      'mistral',
      { model: 'mistral-large', maxRpm: 60, maxTpm: 100_000, maxRpd: 0 },
      'alice',
    );
    expect(created.before).toBeUndefined();
    expect(created.after).toEqual({
      name: 'mistral',
      enabled: false,
      models: [{ model: 'mistral-large', maxRpm: 60, maxTpm: 100_000, maxRpd: 0 }],
    });

    const more = await store.setModelQuota(
      'mistral',
      { model: 'codestral', maxRpm: 30, maxTpm: 0, maxRpd: 500 },
      'alice',
    );
    expect(more.after.models.map((m) => m.model)).toEqual(['codestral', 'mistral-large']);

    const edited = await store.setModelQuota(
      'openai',
      { model: 'gpt-4o', maxRpm: 1, maxTpm: 2, maxRpd: 3 },
      'bob',
    );
    expect(edited.before?.models.find((m) => m.model === 'gpt-4o')?.maxRpm).toBe(500);
    expect(edited.after.models.find((m) => m.model === 'gpt-4o')).toEqual({
      model: 'gpt-4o',
      maxRpm: 1,
      maxTpm: 2,
      maxRpd: 3,
    });
    expect(edited.after.models).toHaveLength(6);

    const enabled = await store.setProviderEnabled('mistral', true, 'carol');
    expect(enabled.before?.enabled).toBe(false);
    expect(enabled.after.enabled).toBe(true);
    expect((await store.setProviderEnabled('mistral', true, 'carol')).changed).toBe(false);

    const fresh = await store.setProviderEnabled('newco', true, 'carol');
    expect(fresh).toEqual({
      before: undefined,
      after: { name: 'newco', enabled: true, models: [] },
      changed: true,
    });

    expect((await store.providers()).map((p) => p.name)).toEqual([
      'anthropic',
      'gemini',
      'local',
      'mistral',
      'newco',
      'openai',
    ]);
    const log = await store.auditLog(100);
    expect(log.map((e) => `${e.action} ${e.target}`)).toEqual([
      'setProviderEnabled newco',
      'setProviderEnabled mistral',
      'setModelQuota openai',
      'setModelQuota mistral',
      'setModelQuota mistral',
    ]);
    expect(log[2]!.before).toEqual(edited.before);
    expect(log[2]!.after).toEqual(edited.after);
  });

  describe('importAll', () => {
    it('applies everything in one transaction, auditing each changed quota and provider once', async () => {
      const clock = new HandClock(10_000);
      const { store } = await openTracked(freshDir(), clock);
      await store.saveQuota(quota('same'), 'alice');
      await store.saveQuota(quota('older', 1), 'alice');
      const before = await store.auditLog(100);

      clock.t = 20_000;
      const result = await store.importAll(
        {
          quotas: [quota('same'), quota('older', 2), quota('brand-new')],
          enableProviders: ['openai', 'local'],
          models: [
            { provider: 'openai', model: { model: 'gpt-4o', maxRpm: 7, maxTpm: 7, maxRpd: 7 } },
            { provider: 'fresh', model: { model: 'f-1', maxRpm: 1, maxTpm: 1, maxRpd: 1 } },
          ],
        },
        'importer',
        'yaml: 3 quotas, 2 providers',
      );
      expect(result.changedQuotas.map((q) => [q.spec.name, q.version, q.updatedAt])).toEqual([
        ['older', 2, 20_000],
        ['brand-new', 1, 20_000],
      ]);
      expect(result.changedProviders.map((p) => [p.name, p.enabled, p.models.length])).toEqual([
        ['openai', true, 6],
        ['local', true, 0],
        ['fresh', false, 1],
      ]);

      const log = await store.auditLog(100);
      const added = log.slice(0, log.length - before.length);
      expect(added.map((e) => `${e.action} ${e.target}`).sort()).toEqual([
        'importConfig brand-new',
        'importConfig fresh',
        'importConfig local',
        'importConfig older',
        'importConfig openai',
      ]);
      for (const e of added) {
        expect(e).toMatchObject({ actor: 'importer', at: 20_000 });
        expect(e.detail).toBe('yaml: 3 quotas, 2 providers');
      }
      expect(added.find((e) => e.target === 'openai')?.before).toMatchObject({ enabled: false });

      // The same import again changes nothing and writes nothing.
      const again = await store.importAll(
        {
          quotas: [quota('same'), quota('older', 2), quota('brand-new')],
          enableProviders: ['openai', 'local'],
          models: [
            { provider: 'openai', model: { model: 'gpt-4o', maxRpm: 7, maxTpm: 7, maxRpd: 7 } },
            { provider: 'fresh', model: { model: 'f-1', maxRpm: 1, maxTpm: 1, maxRpd: 1 } },
          ],
        },
        'importer',
        'again',
      );
      expect(again).toEqual({ changedQuotas: [], changedProviders: [] });
      expect(await store.auditLog(100)).toHaveLength(log.length);
    });

    it('keeps nothing when the second quota throws', async () => {
      const { store } = await openTracked(freshDir());
      await store.saveQuota(quota('existing', 1), 'alice');
      const snapshot = await store.controlSet();
      const log = await store.auditLog(100);

      // JSON.stringify throws on a BigInt: the failure comes after the first quota was written.
      const poisoned = quota('poisoned', 1, { shadow: 10n as unknown as boolean });
      await expect(
        store.importAll(
          {
            quotas: [quota('first-of-two'), poisoned],
            enableProviders: ['openai'],
            models: [],
          },
          'importer',
          'bad',
        ),
      ).rejects.toThrow(/BigInt/);

      expect(await store.controlSet()).toEqual(snapshot);
      expect(await store.quota('first-of-two')).toBeUndefined();
      expect(await store.auditLog(100)).toEqual(log);
    });

    it('keeps nothing when the database refuses a later row', async () => {
      const dir = freshDir();
      const { store } = await openTracked(dir);
      const snapshot = await store.controlSet();
      // A constraint of the database itself: the INSERT of the second quota is aborted by SQLite,
      // after the first quota's INSERT (and its audit entry) went through in the same transaction.
      const db = new Database(join(dir, ADMIN_DATABASE_FILE));
      db.exec(`CREATE TRIGGER refuse_second BEFORE INSERT ON quotas
               WHEN NEW.name = 'second-of-two'
               BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END`);
      db.close();

      await expect(
        store.importAll(
          {
            quotas: [quota('first-of-two'), quota('second-of-two')],
            enableProviders: ['anthropic'],
            models: [],
          },
          'importer',
          'bad',
        ),
      ).rejects.toThrow(/refused by the test trigger/);
      expect(await store.controlSet()).toEqual(snapshot);
      expect(await store.auditLog(100)).toEqual([]);

      // A model the ORM refuses (a required limit missing) after both quotas were written.
      await expect(
        store.importAll(
          {
            quotas: [quota('first-of-two'), quota('third')],
            enableProviders: ['anthropic'],
            models: [
              {
                provider: 'gemini',
                model: { model: 'broken', maxRpm: null as unknown as number, maxTpm: 1, maxRpd: 1 },
              },
            ],
          },
          'importer',
          'bad',
        ),
      ).rejects.toThrow(/maxRpm is required/);
      expect(await store.controlSet()).toEqual(snapshot);
      expect(await store.auditLog(100)).toEqual([]);
    });
  });

  it('keeps everything across a restart and does not seed an edited or deleted model back', async () => {
    const dir = freshDir();
    const clock = new HandClock(1_000);
    const first = await openTracked(dir, clock);
    await first.store.saveQuota(quota('api', 5), 'alice');
    clock.t = 2_000;
    await first.store.saveQuota(quota('api', 6), 'alice');
    await first.store.setModelQuota(
      'gemini',
      { model: 'gemini-2.5-pro', maxRpm: 10, maxTpm: 20, maxRpd: 30 },
      'bob',
    );
    await first.store.setProviderEnabled('openai', true, 'bob');
    await first.store.record('carol', 'resetKey', 'api/user-1', null, { reset: true });
    const state = await first.store.controlSet();
    const log = await first.store.auditLog(100);
    await close(first);

    // An operator deletes a model and a provider outright (no API does yet; the seed must cope).
    const db = new Database(join(dir, ADMIN_DATABASE_FILE));
    db.prepare("DELETE FROM model_quotas WHERE provider = 'openai' AND model = 'o1'").run();
    db.prepare("DELETE FROM model_quotas WHERE provider = 'anthropic'").run();
    db.prepare("DELETE FROM providers WHERE name = 'anthropic'").run();
    db.close();

    // Restarted, imported as the app module will: settings from a global module.
    const second = await openTracked(dir, new HandClock(9_000), 'plain');
    const after = await second.store.controlSet();
    expect(after.quotas).toEqual(state.quotas);
    expect(after.quotas[0]).toMatchObject({ version: 2, updatedAt: 2_000 });
    const gemini = after.providers.find((p) => p.name === 'gemini');
    expect(gemini?.models.find((m) => m.model === 'gemini-2.5-pro')).toEqual({
      model: 'gemini-2.5-pro',
      maxRpm: 10,
      maxTpm: 20,
      maxRpd: 30,
    });
    expect(after.providers.find((p) => p.name === 'openai')).toMatchObject({ enabled: true });
    expect(after.providers.find((p) => p.name === 'openai')?.models).toHaveLength(5);
    expect(after.providers.map((p) => p.name)).toEqual(['gemini', 'local', 'openai']);
    expect(await second.store.auditLog(100)).toEqual(log);
    expect(withFile(dir, (d) => d.prepare('SELECT name FROM mikro_orm_migrations').all())).toEqual(
      STORE_MIGRATIONS.map(({ name }) => ({ name })),
    );
  });

  it('seeds a built-in model it has never seen (a later release) into an existing database', async () => {
    const dir = freshDir();
    const first = await openTracked(dir);
    await close(first);
    // As if this database predated the model: neither the row nor its ledger entry exist.
    const db = new Database(join(dir, ADMIN_DATABASE_FILE));
    db.prepare("DELETE FROM model_quotas WHERE model = 'claude-opus-4'").run();
    db.prepare("DELETE FROM builtin_seeds WHERE model = 'claude-opus-4'").run();
    db.close();

    const second = await openTracked(dir, new HandClock(), 'global');
    const anthropic = await second.store.provider('anthropic');
    expect(anthropic?.models.map((m) => m.model)).toEqual([
      'claude-haiku-3.5',
      'claude-opus-4',
      'claude-sonnet-4',
    ]);
  });

  it('lands 50 concurrent saves of different quotas, with reads in between', async () => {
    const { store } = await openTracked(freshDir());
    const names = Array.from({ length: 50 }, (_, i) => `q-${String(i).padStart(2, '0')}`);
    const results = await Promise.all([
      ...names.map((name, i) => store.saveQuota(quota(name, i + 1), `actor-${i}`)),
      ...names.slice(0, 10).map(() => store.controlSet()),
    ]);
    expect(results).toHaveLength(60);
    const quotas = await store.quotas();
    expect(quotas.map((q) => q.spec.name)).toEqual(names);
    expect(quotas.every((q) => q.version === 1)).toBe(true);
    expect(quotas.map((q) => q.spec.limits[0]!.limit)).toEqual(names.map((_, i) => i + 1));
    expect(await store.auditLog(1000)).toHaveLength(50);

    // And 50 concurrent changes of one quota: each gets its own version.
    await Promise.all(names.map((_, i) => store.saveQuota(quota('hot', 1000 + i), 'x')));
    expect((await store.quota('hot'))?.version).toBe(50);
  });

  describe('match patterns are unique', () => {
    const matching = (name: string, match: string, limit = 1) => quota(name, limit, { match });

    it('refuses a second quota with one pattern, in the store and in the database', async () => {
      const dir = freshDir();
      const { store, orm } = await openTracked(dir);
      await store.saveQuota(matching('a', 'p-*'), 'alice');
      const log = await store.auditLog(100);
      await expect(store.saveQuota(matching('b', 'p-*'), 'bob')).rejects.toEqual(
        new MatchTakenError([{ quota: 'b', match: 'p-*', owner: 'a' }]),
      );
      // The owner may save its own pattern again, and give it up for another quota to take.
      await store.saveQuota(matching('a', 'p-*', 2), 'alice');
      await store.saveQuota(matching('a', 'q-*', 2), 'alice');
      await store.saveQuota(matching('b', 'p-*'), 'bob');
      expect((await store.quotas()).map((q) => [q.spec.name, q.spec.match])).toEqual([
        ['a', 'q-*'],
        ['b', 'p-*'],
      ]);
      expect(await store.auditLog(100)).toHaveLength(log.length + 3);

      // A writer that skips the store's check (another process on the file) meets the index.
      const em = orm.em.fork();
      em.create(QuotaRow, { name: 'c', spec: '{}', match: 'p-*', version: 1, updatedAt: 1 });
      await expect(em.flush()).rejects.toThrow(/UNIQUE constraint failed: quotas\.match/);
      const columns = withFile(dir, (db) =>
        db.prepare('SELECT name, match FROM quotas ORDER BY name').all(),
      );
      expect(columns).toEqual([
        { name: 'a', match: 'q-*' },
        { name: 'b', match: 'p-*' },
      ]);
    });

    it('importAll swaps patterns between imported quotas, and refuses the pattern of a quota it leaves alone', async () => {
      const { store } = await openTracked(freshDir());
      await store.importAll(
        {
          quotas: [matching('a', 'x-*'), matching('b', 'y-*'), matching('kept', 'k-*')],
          enableProviders: [],
          models: [],
        },
        'importer',
        'first',
      );
      const swapped = await store.importAll(
        {
          quotas: [matching('a', 'y-*'), matching('b', 'x-*'), matching('new', 'a-*')],
          enableProviders: [],
          models: [],
        },
        'importer',
        'swap',
      );
      expect(swapped.changedQuotas.map((q) => [q.spec.name, q.spec.match])).toEqual([
        ['a', 'y-*'],
        ['b', 'x-*'],
        ['new', 'a-*'],
      ]);
      const snapshot = await store.controlSet();
      await expect(
        store.importAll(
          {
            quotas: [matching('c', 'k-*'), matching('d', 'free-*'), matching('e', 'x-*')],
            enableProviders: [],
            models: [],
          },
          'importer',
          'clash',
        ),
      ).rejects.toEqual(
        new MatchTakenError([
          { quota: 'c', match: 'k-*', owner: 'kept' },
          { quota: 'e', match: 'x-*', owner: 'b' },
        ]),
      );
      expect(await store.controlSet()).toEqual(snapshot);
    });

    it('opens a database that holds one pattern twice (from before the unique column)', async () => {
      const dir = freshDir();
      // The schema as the first release left it, with two quotas of one pattern in it.
      const old = await openStoreOrm(dir, STORE_MIGRATIONS.slice(0, 1));
      const spec = (name: string) => JSON.stringify(matching(name, 'dup-*'));
      await old.em
        .getConnection()
        .execute(
          `insert into quotas (name, spec, version, updated_at) values ('z', '${spec('z')}', 1, 1), ('m', '${spec('m')}', 1, 1), ('free', '${JSON.stringify(quota('free'))}', 1, 1)`,
        );
      await old.close(true);

      const { store } = await openTracked(dir);
      const columns = withFile(dir, (db) =>
        db.prepare('SELECT name, match FROM quotas ORDER BY name').all(),
      );
      expect(columns).toEqual([
        { name: 'free', match: null },
        { name: 'm', match: 'dup-*' },
        { name: 'z', match: null },
      ]);
      // Both still exist; the one without the pattern cannot be saved with it while m has it.
      expect((await store.quotas()).map((q) => q.spec.name)).toEqual(['free', 'm', 'z']);
      await expect(store.saveQuota(matching('z', 'dup-*', 2), 'ops')).rejects.toBeInstanceOf(
        MatchTakenError,
      );
      await store.deleteQuota('m', 'ops');
      await store.saveQuota(matching('z', 'dup-*'), 'ops');
      expect(
        withFile(dir, (db) => db.prepare("SELECT match FROM quotas WHERE name = 'z'").get()),
      ).toEqual({ match: 'dup-*' });
    });
  });

  it('keeps the sizes of its lists in memory, from the start and after every write', async () => {
    const dir = freshDir();
    const first = await openTracked(dir);
    const builtIn = { providers: 4, modelsPerProvider: 6 };
    expect(first.store.listSizes()).toEqual({ quotas: 0, limitsPerQuota: 0, ...builtIn });
    const limits = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        name: `l${i}`,
        unit: 'requests',
        limit: 1,
        windowMs: 1000,
        algorithm: 'fixed_window' as const,
      }));
    await first.store.saveQuota({ name: 'wide', limits: limits(5) }, 'a');
    await first.store.importAll(
      {
        quotas: [quota('i1'), quota('i2')],
        enableProviders: ['brand-new'],
        models: Array.from({ length: 9 }, (_, i) => ({
          provider: 'openai',
          model: { model: `extra-${i}`, maxRpm: 1, maxTpm: 1, maxRpd: 1 },
        })),
      },
      'a',
      'sizes',
    );
    expect(first.store.listSizes()).toEqual({
      quotas: 3,
      limitsPerQuota: 5,
      providers: 5,
      modelsPerProvider: 15,
    });
    await first.store.deleteQuota('i1', 'a');
    // A maximum stays as high as it went until the next start; counts follow every write.
    await first.store.saveQuota({ name: 'wide', limits: limits(1) }, 'a');
    expect(first.store.listSizes()).toMatchObject({ quotas: 2, limitsPerQuota: 5 });
    await close(first);

    const second = await openTracked(dir);
    expect(second.store.listSizes()).toEqual({
      quotas: 2,
      limitsPerQuota: 1,
      providers: 5,
      modelsPerProvider: 15,
    });
  });

  it('answers quotas a page at a time, by name', async () => {
    const { store } = await openTracked(freshDir());
    const names = ['b', 'a', 'd', 'c', 'e'];
    for (const name of names) await store.saveQuota(quota(name), 'a');
    const page = async (first?: number, after?: string) =>
      (await store.quotas({ first, after })).map((q) => q.spec.name);
    expect(await page()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await page(2)).toEqual(['a', 'b']);
    expect(await page(2, 'b')).toEqual(['c', 'd']);
    expect(await page(undefined, 'c')).toEqual(['d', 'e']);
    expect(await page(10, 'e')).toEqual([]);
  });

  it('answers the audit log newest first, limited', async () => {
    const clock = new HandClock(100);
    const { store } = await openTracked(freshDir(), clock);
    for (let i = 0; i < 5; i++) {
      clock.t = 100 + i;
      await store.record('ops', 'resetKey', `key-${i}`, { n: i }, i % 2 === 0 ? null : [i]);
    }
    const three = await store.auditLog(3);
    expect(three.map((e) => e.target)).toEqual(['key-4', 'key-3', 'key-2']);
    expect(three.map((e) => e.at)).toEqual([104, 103, 102]);
    expect(three[1]).toMatchObject({
      actor: 'ops',
      action: 'resetKey',
      before: { n: 3 },
      after: [3],
    });
    expect(three[0]!.detail).toBeUndefined();
    expect(await store.auditLog(0)).toEqual([]);
    expect((await store.auditLog(2.9)).map((e) => e.target)).toEqual(['key-4', 'key-3']);
    expect(await store.auditLog(100)).toHaveLength(5);
  });
});
