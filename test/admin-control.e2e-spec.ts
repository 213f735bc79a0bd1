/**
 * The admin's NATS side (apps/admin/src/control) against real NATS with JetStream. The test plays
 * the limiters with plain nats.js subscriptions and publishers: it answers key stats and resets,
 * serves the usage queue group and publishes stats reports, so only the admin side is under test.
 * The restart tests run NATS servers of their own on free ports (the shared one cannot be stopped).
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  controlNames,
  natsSubjects,
  providerEntryKey,
  quotaEntryKey,
  REPLICA_SILENT_AFTER_MS,
  type ControlProvider,
  type ControlQuota,
  type ControlSet,
  type KeyStats,
  type StatsReport,
} from '@app/contracts';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { connect, type KV, type Msg, type NatsConnection, type Subscription } from 'nats';
import {
  ControlModule,
  ControlPublisher,
  FAN_OUT_MAX_WAIT_MS,
  LimiterClient,
  NatsConnectionService,
  StatsAggregator,
  STATS_UPDATE_EVERY_MS,
  type StatsUpdate,
} from '../apps/admin/src/control';
import { readAdminSettings } from '../apps/admin/src/settings/admin-settings';
import { SettingsModule } from '../apps/admin/src/settings/settings.module';
import { startNatsServer, stopProcess, waitUntil as eventually } from './support/nats-process';

jest.setTimeout(30_000);

const SHARED_NATS = 'nats://127.0.0.1:4222';
const FILE_PREFIX = `test.${randomUUID()}`;
type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// helpers

interface Admin {
  readonly app: INestApplicationContext;
  readonly prefix: string;
  readonly connection: NatsConnectionService;
  readonly publisher: ControlPublisher;
  readonly aggregator: StatsAggregator;
  readonly client: LimiterClient;
}

const dataDir = mkdtempSync(join(tmpdir(), 'admin-control-'));
/** Every prefix an admin used on the shared NATS: their buckets are deleted at the end. */
const prefixesOnSharedNats: string[] = [];

async function startAdmin(natsUrl: string, prefix: string): Promise<Admin> {
  if (natsUrl === SHARED_NATS) prefixesOnSharedNats.push(prefix);
  const settings = readAdminSettings({
    NATS_URL: natsUrl,
    NATS_SUBJECT_PREFIX: prefix,
    DATA_DIR: dataDir,
  });
  const app = await NestFactory.createApplicationContext(
    {
      module: class AdminControlTestModule {},
      imports: [SettingsModule.forRoot(settings), ControlModule],
    },
    { logger: false },
  );
  return {
    app,
    prefix,
    connection: app.get(NatsConnectionService),
    publisher: app.get(ControlPublisher),
    aggregator: app.get(StatsAggregator),
    client: app.get(LimiterClient),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function quota(name: string, version = 1, limit = 10): ControlQuota {
  return {
    spec: {
      name,
      match: `${name}-*`,
      limits: [{ name: 'rps', unit: 'requests', limit, windowMs: 1000, algorithm: 'fixed_window' }],
      scope: 'local',
    },
    version,
    updatedAt: 1_763_750_000_000 + version,
  };
}

function provider(name: string, enabled = true): ControlProvider {
  return {
    name,
    enabled,
    models: [{ model: `${name}-model`, maxRpm: 10, maxTpm: 1000, maxRpd: 0 }],
  };
}

function stats(over: Partial<KeyStats> & { used?: number[] } = {}): KeyStats {
  const used = over.used ?? [1, 100];
  return {
    key: over.key ?? 'user-1',
    quota: over.quota ?? 'api',
    limits: [
      {
        name: 'rps',
        unit: 'requests',
        limit: 10,
        used: used[0]!,
        remaining: 10 - used[0]!,
        resetMs: 300,
      },
      {
        name: 'tpm',
        unit: 'tokens',
        limit: 1000,
        used: used[1]!,
        remaining: 1000 - used[1]!,
        resetMs: 40_000,
      },
    ],
    queued: over.queued ?? 0,
    inFlight: over.inFlight ?? 0,
    approved: over.approved ?? 0,
    denied: over.denied ?? 0,
  };
}

async function openBucket(nc: NatsConnection, prefix: string): Promise<KV> {
  return nc.jetstream().views.kv(controlNames(prefix).bucket, { bindOnly: true });
}

/** The bucket's live entries: key → parsed value. */
async function bucketContents(kv: KV): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const keys: string[] = [];
  for await (const key of await kv.keys()) keys.push(key);
  for (const key of keys) {
    const entry = await kv.get(key);
    if (entry !== null && entry.operation === 'PUT') out.set(key, entry.json());
  }
  return out;
}

async function deleteBucket(nc: NatsConnection, prefix: string): Promise<void> {
  const jsm = await nc.jetstreamManager();
  await jsm.streams.delete(`KV_${controlNames(prefix).bucket}`).catch(() => false);
}

function decode(msg: Msg): unknown {
  return JSON.parse(new TextDecoder().decode(msg.data));
}

/** A fake limiter replica's handler of one subject: `answer` decides the reply (or silence). */
interface Responder {
  readonly received: unknown[];
  answer: (query: unknown) => unknown;
  delayMs: number;
  readonly sub: Subscription;
}

function respond(
  nc: NatsConnection,
  subject: string,
  answer: (query: unknown) => unknown,
  queue?: string,
): Responder {
  const responder: Responder = {
    received: [],
    answer,
    delayMs: 0,
    sub: nc.subscribe(subject, {
      queue,
      callback: (error, msg) => {
        if (error !== null) return;
        const query = decode(msg);
        responder.received.push(query);
        const reply = responder.answer(query);
        if (reply === undefined) return;
        const send = () => msg.respond(typeof reply === 'string' ? reply : JSON.stringify(reply));
        if (responder.delayMs > 0) setTimeout(send, responder.delayMs);
        else send();
      },
    }),
  };
  return responder;
}

/** A fake limiter's stats publisher: one report now, then every 500 ms until stopped. */
function reporter(
  nc: NatsConnection,
  prefix: string,
  replica: string,
  quotas: () => StatsReport['quotas'],
): { stop(): void } {
  const subject = controlNames(prefix).statsReport;
  const publish = () => {
    const report: StatsReport = { replica, at: Date.now(), quotas: quotas() };
    nc.publish(subject, JSON.stringify(report));
  };
  publish();
  const timer = setInterval(publish, 500);
  return { stop: () => clearInterval(timer) };
}

// ---------------------------------------------------------------------------------------------

let nc: NatsConnection;

beforeAll(async () => {
  nc = await connect({ servers: SHARED_NATS });
});

afterAll(async () => {
  for (const prefix of prefixesOnSharedNats) await deleteBucket(nc, prefix);
  await nc.drain();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('ControlPublisher: the KV bucket the limiters watch', () => {
  let admin: Admin;
  let kv: KV;

  beforeAll(async () => {
    admin = await startAdmin(SHARED_NATS, `${FILE_PREFIX}.kv`);
    await eventually('the admin connected', () => admin.connection.isUp);
  });

  afterAll(async () => {
    await admin.app.close();
  });

  it('publishes quotas and providers as entries and deletes them', async () => {
    const api = quota('api', 3);
    const odd = quota('team:a.b c', 1); // dots, colon, space: hex-encoded in the key
    await expect(admin.publisher.publishQuota(api)).resolves.toEqual({ published: true });
    await expect(admin.publisher.publishQuota(odd)).resolves.toEqual({ published: true });
    await expect(admin.publisher.publishProvider(provider('openai'))).resolves.toEqual({
      published: true,
    });
    expect(admin.publisher.pending).toBe(false);

    kv = await openBucket(nc, admin.prefix); // the publisher created it
    const status = await kv.status();
    expect(status.history).toBe(1);
    let contents = await bucketContents(kv);
    expect(contents.get(quotaEntryKey('api'))).toEqual(api);
    expect(contents.get(quotaEntryKey('team:a.b c'))).toEqual(odd);
    expect(contents.get(providerEntryKey('openai'))).toEqual(provider('openai'));

    await expect(admin.publisher.removeQuota('api')).resolves.toEqual({ published: true });
    contents = await bucketContents(kv);
    expect(contents.has(quotaEntryKey('api'))).toBe(false);
    expect(contents.has(quotaEntryKey('team:a.b c'))).toBe(true);
    expect((await kv.get(quotaEntryKey('api')))?.operation).toBe('DEL');
  });

  it('keeps writes in the order they were asked for', async () => {
    // Fired without awaiting: puts and deletes of one key must land in call order.
    const writes: Promise<unknown>[] = [];
    for (let v = 1; v <= 20; v++) {
      writes.push(admin.publisher.publishQuota(quota('ordered', v)));
      if (v % 3 === 0) writes.push(admin.publisher.removeQuota('ordered'));
    }
    writes.push(admin.publisher.publishQuota(quota('gone', 1)));
    writes.push(admin.publisher.removeQuota('gone'));
    const outcomes = await Promise.all(writes);
    expect(outcomes.every((o) => (o as { published: boolean }).published)).toBe(true);

    const contents = await bucketContents(kv);
    expect(contents.get(quotaEntryKey('ordered'))).toEqual(quota('ordered', 20));
    expect(contents.has(quotaEntryKey('gone'))).toBe(false);
  });

  it('never interleaves a reconcile with writes', async () => {
    await admin.publisher.publishQuota(quota('x', 1));
    const filler = Array.from({ length: 20 }, (_, i) => quota(`filler-${i}`, 1));
    // Asked in this order: reconcile (without x or y), then put x, then put y, then reconcile
    // (without y). Only a FIFO queue ends with x present (the reconcile saw x v1, deleted it,
    // then the put landed) and y absent (the second reconcile saw y).
    const first = admin.publisher.reconcile({ quotas: filler, providers: [] });
    const putX = admin.publisher.publishQuota(quota('x', 2));
    const putY = admin.publisher.publishQuota(quota('y', 1));
    const second = admin.publisher.reconcile({ quotas: [...filler, quota('x', 2)], providers: [] });
    await Promise.all([first, putX, putY, second]);
    await expect(second).resolves.toEqual({ published: true, put: 0, deleted: 1 });

    const contents = await bucketContents(kv);
    expect(contents.get(quotaEntryKey('x'))).toEqual(quota('x', 2));
    expect(contents.has(quotaEntryKey('y'))).toBe(false);
  });

  it('reconcile makes the bucket hold exactly the set: strays deleted, missing and stale put', async () => {
    const same = quota('same', 2);
    await admin.publisher.publishQuota(same);
    // What a bucket might hold after an admin crash or someone else's write:
    await kv.put(quotaEntryKey('stray'), JSON.stringify(quota('stray')));
    await kv.put('other.thing', '{}');
    await kv.put(quotaEntryKey('stale'), JSON.stringify(quota('stale', 1)));
    const sameRevision = (await kv.get(quotaEntryKey('same')))!.revision;

    const set: ControlSet = {
      quotas: [same, quota('stale', 2), quota('missing', 1)],
      providers: [provider('anthropic', false)],
    };
    const wanted = [
      quotaEntryKey('same'),
      quotaEntryKey('stale'),
      quotaEntryKey('missing'),
      providerEntryKey('anthropic'),
    ];
    const strays = [...(await bucketContents(kv)).keys()].filter((k) => !wanted.includes(k));
    expect(strays).toEqual(expect.arrayContaining([quotaEntryKey('stray'), 'other.thing']));

    const outcome = await admin.publisher.reconcile(set);
    // stale changed, missing and anthropic missing; everything else in the bucket is a stray
    expect(outcome).toEqual({ published: true, put: 3, deleted: strays.length });

    const contents = await bucketContents(kv);
    expect([...contents.keys()].sort()).toEqual(wanted.sort());
    expect(contents.get(quotaEntryKey('stale'))).toEqual(quota('stale', 2));
    expect(contents.get(providerEntryKey('anthropic'))).toEqual(provider('anthropic', false));
    // An entry already right is not written again (no revision, no limiter reload).
    expect((await kv.get(quotaEntryKey('same')))!.revision).toBe(sameRevision);

    // A second reconcile of the same set has nothing to do.
    await expect(admin.publisher.reconcile(set)).resolves.toEqual({
      published: true,
      put: 0,
      deleted: 0,
    });
  });

  it('bounds the bucket it creates, and one created before it without bounds', async () => {
    const jsm = await nc.jetstreamManager();
    const bounds = async (prefix: string) => {
      const { config } = await jsm.streams.info(`KV_${controlNames(prefix).bucket}`);
      return { maxBytes: config.max_bytes, maxValue: config.max_msg_size };
    };
    expect(await bounds(admin.prefix)).toEqual({ maxBytes: 64 * 2 ** 20, maxValue: 256 * 2 ** 10 });

    const prefix = `${FILE_PREFIX}.unbounded`;
    await nc.jetstream().views.kv(controlNames(prefix).bucket, { history: 1 });
    expect(await bounds(prefix)).toEqual({ maxBytes: -1, maxValue: -1 });
    const other = await startAdmin(SHARED_NATS, prefix);
    try {
      await eventually('the admin connected', () => other.connection.isUp);
      await expect(other.publisher.publishQuota(quota('q'))).resolves.toEqual({ published: true });
      expect(await bounds(prefix)).toEqual({ maxBytes: 64 * 2 ** 20, maxValue: 256 * 2 ** 10 });
    } finally {
      await other.app.close();
    }
  });

  it('setSource reconciles at once from the caller-supplied state', async () => {
    const set: ControlSet = { quotas: [quota('from-source', 7)], providers: [provider('gemini')] };
    admin.publisher.setSource(() => Promise.resolve(set));
    await admin.publisher.idle();
    const contents = await bucketContents(kv);
    expect([...contents.keys()].sort()).toEqual(
      [quotaEntryKey('from-source'), providerEntryKey('gemini')].sort(),
    );
  });
});

describe('LimiterClient: fan-out to every replica and the usage queue group', () => {
  let admin: Admin;
  let names: ReturnType<typeof controlNames>;
  const reporters: { stop(): void }[] = [];
  const responders: Responder[] = [];

  beforeAll(async () => {
    admin = await startAdmin(SHARED_NATS, `${FILE_PREFIX}.fanout`);
    names = controlNames(admin.prefix);
    await eventually('the admin connected', () => admin.connection.isUp);
  });

  afterEach(() => {
    for (const r of responders.splice(0)) r.sub.unsubscribe();
  });

  afterAll(async () => {
    for (const r of reporters) r.stop();
    await admin.app.close();
  });

  /** Two fake replicas A and B: both report stats, so the admin expects two answers. */
  async function twoKnownReplicas(): Promise<void> {
    if (reporters.length === 0) {
      reporters.push(reporter(nc, admin.prefix, 'replica-a', () => []));
      reporters.push(reporter(nc, admin.prefix, 'replica-b', () => []));
    }
    await eventually('two live replicas', () => admin.aggregator.liveReplicas() === 2);
  }

  it('keyStats sums local-scope answers and recomputes remaining', async () => {
    await twoKnownReplicas();
    const a = respond(nc, names.keyStats, () => ({
      replica: 'replica-a',
      scope: 'local',
      value: stats({ used: [4, 300], queued: 1, inFlight: 2, approved: 4, denied: 1 }),
    }));
    const b = respond(nc, names.keyStats, () => ({
      replica: 'replica-b',
      scope: 'local',
      value: {
        ...stats({ used: [3, 800], queued: 2, inFlight: 1, approved: 3, denied: 5 }),
        limits: stats({ used: [3, 800] }).limits.map((l) =>
          l.name === 'rps' ? { ...l, resetMs: 700 } : l,
        ),
      },
    }));
    responders.push(a, b);
    await nc.flush();

    const started = Date.now();
    const result = await admin.client.keyStats('user-1', 'api');
    // Two live replicas known: the 'count' strategy returns on the second answer, not when the
    // timer of a Timer strategy would have ended the request.
    expect(Date.now() - started).toBeLessThan(FAN_OUT_MAX_WAIT_MS);
    expect(a.received).toEqual([{ key: 'user-1', quota: 'api' }]);
    expect(b.received).toEqual([{ key: 'user-1', quota: 'api' }]);
    expect(result.replicas).toBe(2);
    expect(result.code).toBeUndefined();
    expect(result.scope).toBe('local');
    expect(result.stats).toEqual({
      key: 'user-1',
      quota: 'api',
      limits: [
        { name: 'rps', unit: 'requests', limit: 10, used: 7, remaining: 3, resetMs: 700 },
        // used 1100 of 1000: remaining never below 0
        { name: 'tpm', unit: 'tokens', limit: 1000, used: 1100, remaining: 0, resetMs: 40_000 },
      ],
      queued: 3,
      inFlight: 3,
      approved: 7,
      denied: 6,
    });

    // Without a quota the query carries only the key.
    await admin.client.keyStats('user-2');
    expect(a.received[1]).toEqual({ key: 'user-2' });
  });

  it('keyStats takes one cluster-scope answer as is (newest), summing only queued', async () => {
    await twoKnownReplicas();
    const first = stats({ used: [5, 500], queued: 1, inFlight: 2, approved: 5, denied: 2 });
    const newest = stats({ used: [6, 510], queued: 4, inFlight: 2, approved: 6, denied: 2 });
    const a = respond(nc, names.keyStats, () => ({
      replica: 'replica-a',
      scope: 'cluster',
      value: first,
    }));
    const b = respond(nc, names.keyStats, () => ({
      replica: 'replica-b',
      scope: 'cluster',
      value: newest,
    }));
    b.delayMs = 50; // arrives last: it read Redis last
    responders.push(a, b);
    await nc.flush();

    const result = await admin.client.keyStats('user-1', 'api');
    expect(result.replicas).toBe(2);
    expect(result.scope).toBe('cluster');
    expect(result.stats).toEqual({ ...newest, queued: 5 });
  });

  it('keyStats passes on a refusal every replica gives, and drops malformed answers', async () => {
    await twoKnownReplicas();
    const refusal = { code: 'UNKNOWN_QUOTA', reason: 'quota: no quota named "nope"' };
    const a = respond(nc, names.keyStats, () => ({ replica: 'replica-a', ...refusal }));
    const b = respond(nc, names.keyStats, () => ({ replica: 'replica-b', ...refusal }));
    responders.push(a, b);
    await nc.flush();
    await expect(admin.client.keyStats('user-1', 'nope')).resolves.toEqual({
      replicas: 2,
      ...refusal,
    });

    // B answers garbage: only A counts.
    a.answer = () => ({ replica: 'replica-a', scope: 'local', value: stats({ used: [2, 20] }) });
    b.answer = () => '{"replica": "replica-b", "value": {"key": 1}}';
    const result = await admin.client.keyStats('user-1', 'api');
    expect(result.replicas).toBe(1);
    expect(result.stats?.limits[0]).toMatchObject({ used: 2, remaining: 8 });
  });

  it('resetKey fans out to every replica', async () => {
    await twoKnownReplicas();
    const a = respond(nc, names.resetKey, () => ({
      replica: 'replica-a',
      scope: 'local',
      value: true,
    }));
    const b = respond(nc, names.resetKey, () => ({
      replica: 'replica-b',
      scope: 'local',
      value: false,
    }));
    responders.push(a, b);
    await nc.flush();

    await expect(admin.client.resetKey('user-1', 'api')).resolves.toEqual({
      replicas: 2,
      reset: true,
    });
    expect(a.received).toEqual([{ key: 'user-1', quota: 'api' }]);
    expect(b.received).toEqual([{ key: 'user-1', quota: 'api' }]);

    a.answer = () => ({ replica: 'replica-a', value: false });
    await expect(admin.client.resetKey('user-9')).resolves.toEqual({ replicas: 2, reset: false });

    a.answer = () => ({ replica: 'replica-a', code: 'UNKNOWN_QUOTA', reason: 'no such quota' });
    b.answer = () => ({ replica: 'replica-b', code: 'UNKNOWN_QUOTA', reason: 'no such quota' });
    await expect(admin.client.resetKey('user-1', 'nope')).resolves.toEqual({
      replicas: 2,
      reset: false,
      code: 'UNKNOWN_QUOTA',
      reason: 'no such quota',
    });
  });

  it('with no replica known it waits for whoever answers; with nobody listening: UNAVAILABLE', async () => {
    const lone = await startAdmin(SHARED_NATS, `${FILE_PREFIX}.lone`);
    try {
      await eventually('the admin connected', () => lone.connection.isUp);
      const c = respond(nc, controlNames(lone.prefix).resetKey, () => ({
        replica: 'c',
        value: true,
      }));
      responders.push(c);
      await nc.flush();
      await expect(lone.client.resetKey('k')).resolves.toEqual({ replicas: 1, reset: true });
      c.sub.unsubscribe();
      await nc.flush();
      const started = Date.now();
      await expect(lone.client.keyStats('k')).resolves.toMatchObject({
        replicas: 0,
        code: 'UNAVAILABLE',
      });
      // Ended by the fan-out's own wait (no replica known), with room for a busy machine.
      expect(Date.now() - started).toBeLessThan(FAN_OUT_MAX_WAIT_MS + 1_500);
    } finally {
      await lone.app.close();
    }
  });

  it('recordUsage asks one replica of the usage queue group', async () => {
    const subject = natsSubjects(admin.prefix).usage;
    const usage = stats({ used: [1, 42] });
    const q1 = respond(nc, subject, () => ({ ok: true, usage }), 'ratelimit-limiter');
    const q2 = respond(nc, subject, () => ({ ok: true, usage }), 'ratelimit-limiter');
    responders.push(q1, q2);
    await nc.flush();

    await expect(admin.client.recordUsage('api', 'user-1', { tokens: 42 })).resolves.toEqual({
      ok: true,
      usage,
    });
    // Any second delivery of the request reached `nc` before the PONG of this round trip.
    await nc.flush();
    expect([...q1.received, ...q2.received]).toEqual([
      { key: 'user-1', quota: 'api', cost: { tokens: 42 } },
    ]);

    const refusal = { ok: false, allowed: false, code: 'UNKNOWN_QUOTA', reason: 'quota: unknown' };
    q1.answer = () => refusal;
    q2.answer = () => refusal;
    await expect(admin.client.recordUsage('nope', 'user-1', 3)).resolves.toEqual({
      ok: false,
      code: 'UNKNOWN_QUOTA',
      reason: 'quota: unknown',
    });

    q1.sub.unsubscribe();
    q2.sub.unsubscribe();
    await nc.flush();
    await expect(admin.client.recordUsage('api', 'user-1', 1)).resolves.toMatchObject({
      ok: false,
      code: 'UNAVAILABLE',
    });
  });
});

describe('StatsAggregator: the limiters stats reports', () => {
  let admin: Admin;
  let subject: string;

  beforeEach(async () => {
    admin = await startAdmin(SHARED_NATS, `${FILE_PREFIX}.stats.${randomUUID()}`);
    subject = controlNames(admin.prefix).statsReport;
    await eventually('the admin connected', () => admin.connection.isUp);
  });

  afterEach(async () => {
    await admin.app.close();
  });

  it('sums two replicas per quota, sorted by quota, and ignores malformed reports', async () => {
    const a: StatsReport = {
      replica: 'a',
      at: Date.now(),
      quotas: [
        { quota: 'zeta', approved: 1, denied: 0, queued: 0, activeKeys: 1 },
        {
          quota: 'api',
          approved: 5,
          denied: 1,
          queued: 2,
          activeKeys: 3,
          topRefused: [
            { key: 'mallory', count: 3, error: 1 },
            { key: 'bob', count: 2, error: 0 },
          ],
        },
      ],
    };
    const b: StatsReport = {
      replica: 'b',
      at: Date.now(),
      quotas: [
        {
          quota: 'api',
          approved: 10,
          denied: 4,
          queued: 0,
          activeKeys: 2,
          topRefused: [
            { key: 'bob', count: 4, error: 0 },
            { key: 'eve', count: 1, error: 0 },
          ],
        },
        { quota: 'beta', approved: 7, denied: 0, queued: 1, activeKeys: 1 },
      ],
    };
    nc.publish(subject, JSON.stringify(a));
    nc.publish(subject, JSON.stringify(b));
    await eventually('two replicas', () => admin.aggregator.current().replicas === 2, 3_000);

    // Refused keys merged: counts and error bounds summed per key, most refused first.
    const topRefused = [
      { key: 'bob', count: 6, error: 0 },
      { key: 'mallory', count: 3, error: 1 },
      { key: 'eve', count: 1, error: 0 },
    ];
    const expected = [
      { quota: 'api', approved: 15, denied: 5, queued: 2, activeKeys: 5, topRefused },
      { quota: 'beta', approved: 7, denied: 0, queued: 1, activeKeys: 1, topRefused: [] },
      { quota: 'zeta', approved: 1, denied: 0, queued: 0, activeKeys: 1, topRefused: [] },
    ];
    expect(admin.aggregator.current().quotas).toEqual(expected);

    const malformed: (string | Uint8Array)[] = [
      'not json',
      '[1, 2]',
      'null',
      '{"replica": "a"}',
      JSON.stringify({ ...a, replica: '' }),
      JSON.stringify({ ...a, at: 'now' }),
      JSON.stringify({ ...a, quotas: {} }),
      // a known replica with one bad entry must not overwrite its last good report
      JSON.stringify({
        ...a,
        quotas: [{ quota: 'api', approved: -1, denied: 0, queued: 0, activeKeys: 0 }],
      }),
      JSON.stringify({
        ...a,
        quotas: [{ quota: 'api', approved: 'many', denied: 0, queued: 0, activeKeys: 0 }],
      }),
      JSON.stringify({ replica: 'c', at: Date.now(), quotas: [null] }),
      // hostile top refused keys: over-long, too many, ill-typed
      JSON.stringify({
        ...a,
        quotas: [{ ...a.quotas[1]!, topRefused: [{ key: 'k'.repeat(257), count: 1, error: 0 }] }],
      }),
      JSON.stringify({
        ...a,
        quotas: [
          {
            ...a.quotas[1]!,
            topRefused: Array.from({ length: 11 }, (_, i) => ({
              key: `k${i}`,
              count: 1,
              error: 0,
            })),
          },
        ],
      }),
      JSON.stringify({
        ...a,
        quotas: [{ ...a.quotas[1]!, topRefused: [{ key: 'k', count: '9', error: 0 }] }],
      }),
      JSON.stringify({ ...a, quotas: [{ ...a.quotas[1]!, topRefused: 'mallory' }] }),
      new Uint8Array([0xff, 0xfe, 0x00, 0x7b]),
      new Uint8Array(0),
    ];
    for (const m of malformed) nc.publish(subject, m);
    // A good report after the bad ones proves they were all seen and the process is fine.
    nc.publish(subject, JSON.stringify({ ...b, quotas: [{ ...b.quotas[0]!, approved: 11 }] }));
    await eventually('the good report after the bad ones', () =>
      admin.aggregator.current().quotas.some((q) => q.quota === 'api' && q.approved === 16),
    );
    expect(admin.aggregator.malformedReports).toBe(malformed.length);
    expect(admin.aggregator.current()).toMatchObject({
      replicas: 2,
      quotas: [
        // a's refused keys are its last good report's: the hostile ones changed nothing
        { quota: 'api', approved: 16, denied: 5, queued: 2, activeKeys: 5, topRefused },
        { quota: 'zeta', approved: 1, denied: 0, queued: 0, activeKeys: 1 },
      ],
    });
  });

  it('gives each quota the scope of its replicas: local as soon as one decides it alone', async () => {
    const count = { approved: 1, denied: 0, queued: 0, activeKeys: 1 };
    const a: StatsReport = {
      replica: 'a',
      at: Date.now(),
      quotas: [
        { quota: 'api', ...count, scope: 'local' },
        { quota: 'mixed', ...count, scope: 'cluster' },
        { quota: 'shared', ...count, scope: 'cluster' },
        { quota: 'unsaid', ...count },
      ],
    };
    const b: StatsReport = {
      replica: 'b',
      at: Date.now(),
      quotas: [
        { quota: 'api', ...count, scope: 'local' },
        { quota: 'mixed', ...count, scope: 'local' }, // b has no Redis, say
        { quota: 'shared', ...count, scope: 'cluster' },
        { quota: 'unsaid', ...count },
      ],
    };
    nc.publish(subject, JSON.stringify(a));
    nc.publish(subject, JSON.stringify(b));
    // A scope that is not one spoils the report.
    nc.publish(
      subject,
      JSON.stringify({ ...a, replica: 'c', quotas: [{ ...a.quotas[0]!, scope: 'global' }] }),
    );
    await eventually('two replicas', () => admin.aggregator.current().replicas === 2, 3_000);
    await eventually('the bad reports seen', () => admin.aggregator.malformedReports === 1, 3_000);
    expect(admin.aggregator.current().quotas.map((q) => [q.quota, q.scope])).toEqual([
      ['api', 'local'],
      ['mixed', 'local'],
      ['shared', 'cluster'],
      ['unsaid', undefined],
    ]);
  });

  it('drops a replica silent for 3 s; updates() emits at least once a second', async () => {
    const emitted: { t: number; update: StatsUpdate }[] = [];
    const sub = admin.aggregator
      .updates()
      .subscribe((update) => emitted.push({ t: performance.now(), update }));
    // A 1 s timer of this process's own, beside the aggregator's: load delays both alike.
    let referenceTicks = 0;
    const reference = setInterval(() => referenceTicks++, STATS_UPDATE_EVERY_MS);
    const live = reporter(nc, admin.prefix, 'live', () => [
      { quota: 'api', approved: 1, denied: 0, queued: 0, activeKeys: 1 },
    ]);
    // Heard: the admin's subscription is in place, so the one report of "silent" cannot be lost.
    await eventually('live heard', () => admin.aggregator.liveReplicas() === 1, 5_000);
    // The admin's clock (Date, which alone decides who is silent) stands still from here and is
    // moved by hand: the 3 s boundary is checked exactly, however slow the machine.
    const heardAt = Date.now();
    jest.useFakeTimers({
      now: heardAt,
      doNotFake: [
        ...(['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] as const),
        ...(['setImmediate', 'clearImmediate', 'nextTick', 'queueMicrotask'] as const),
        ...(['hrtime', 'performance'] as const),
      ],
    });
    try {
      // "silent" reports once and then never again.
      nc.publish(
        subject,
        JSON.stringify({
          replica: 'silent',
          at: Date.now(),
          quotas: [{ quota: 'api', approved: 100, denied: 0, queued: 0, activeKeys: 9 }],
        } satisfies StatsReport),
      );
      await eventually('both replicas', () => admin.aggregator.current().replicas === 2, 5_000);
      await eventually('an update with both', () => emitted.some((e) => e.update.replicas === 2));
      jest.setSystemTime(heardAt + REPLICA_SILENT_AFTER_MS - 1);
      // Still within 3 s of its report: it counts.
      expect(admin.aggregator.current()).toMatchObject({
        replicas: 2,
        quotas: [{ quota: 'api', approved: 101, activeKeys: 10 }],
      });
      jest.setSystemTime(heardAt + REPLICA_SILENT_AFTER_MS);
      expect(admin.aggregator.liveReplicas()).toBe(0); // both silent for 3 s now
      // "live" is heard again on its next report; "silent" never.
      await eventually('live heard again', () => admin.aggregator.liveReplicas() === 1, 5_000);
      expect(admin.aggregator.current()).toMatchObject({
        replicas: 1,
        quotas: [{ quota: 'api', approved: 1, activeKeys: 1 }],
      });
      // At once on subscribe, then from the shared 1 s timer: one more per reference tick.
      await eventually('four reference seconds', () => referenceTicks >= 4, 15_000);
    } finally {
      jest.useRealTimers();
      clearInterval(reference);
      live.stop();
      sub.unsubscribe();
    }
    expect(emitted.length).toBeGreaterThanOrEqual(1 + referenceTicks - 1);
    expect(emitted.some((e) => e.update.replicas === 2)).toBe(true);
  });
});

describe('NATS down: nothing throws; NATS back: the bucket is rebuilt', () => {
  it('answers "not published" / UNAVAILABLE while NATS is unreachable, then publishes on connect and after a NATS restart that lost the KV', async () => {
    const port = await freePort();
    const prefix = `${FILE_PREFIX}.restart`;
    const admin = await startAdmin(`nats://127.0.0.1:${port}`, prefix);
    const stores: string[] = [];
    let server: ChildProcess | undefined;
    let own: NatsConnection | undefined;
    // The admin's SQLite, as far as this test is concerned.
    const stored: ControlQuota[] = [];
    admin.publisher.setSource(() => Promise.resolve({ quotas: [...stored], providers: [] }));
    try {
      // Down: a mutation stores, publishes nothing, and is told so; nothing throws.
      stored.push(quota('offline', 1));
      await expect(admin.publisher.publishQuota(quota('offline', 1))).resolves.toMatchObject({
        published: false,
      });
      expect(admin.publisher.pending).toBe(true);
      await expect(admin.publisher.removeQuota('whatever')).resolves.toMatchObject({
        published: false,
      });
      await expect(admin.publisher.reconcile({ quotas: [], providers: [] })).resolves.toMatchObject(
        {
          published: false,
        },
      );
      await expect(admin.client.keyStats('k', 'api')).resolves.toMatchObject({
        replicas: 0,
        code: 'UNAVAILABLE',
      });
      await expect(admin.client.resetKey('k')).resolves.toMatchObject({
        replicas: 0,
        reset: false,
        code: 'UNAVAILABLE',
      });
      await expect(admin.client.recordUsage('api', 'k', 1)).resolves.toMatchObject({
        ok: false,
        code: 'UNAVAILABLE',
      });
      // Stats keep flowing, empty.
      const emitted: StatsUpdate[] = [];
      const sub = admin.aggregator.updates().subscribe((u) => emitted.push(u));
      await eventually('an update after the first', () => emitted.length >= 2, 5_000);
      sub.unsubscribe();
      expect(emitted.length).toBeGreaterThanOrEqual(2);
      expect(emitted.every((u) => u.replicas === 0 && u.quotas.length === 0)).toBe(true);

      // NATS comes up: the admin connects by itself and reconciles from its store.
      stores.push(mkdtempSync(join(tmpdir(), 'admin-control-js-')));
      server = await startNatsServer(port, { storeDir: stores[0]! });
      own = await connect({
        servers: `127.0.0.1:${port}`,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 200,
      });
      await eventually('the admin connected', () => admin.connection.isUp);
      await eventually('the stored quota published', async () => {
        const contents = await bucketContents(await openBucket(own!, prefix));
        return contents.has(quotaEntryKey('offline'));
      });
      await eventually('nothing pending', () => !admin.publisher.pending);
      stored.push(quota('online', 1));
      await expect(admin.publisher.publishQuota(quota('online', 1))).resolves.toEqual({
        published: true,
      });

      // NATS restarts without its JetStream store: the bucket is gone; the admin rebuilds it.
      await stopProcess(server, 'SIGKILL');
      stores.push(mkdtempSync(join(tmpdir(), 'admin-control-js-')));
      server = await startNatsServer(port, { storeDir: stores[1]! });
      await eventually('the admin reconnected', () => admin.connection.isUp);
      await eventually('the bucket rebuilt', async () => {
        const contents = await bucketContents(await openBucket(own!, prefix));
        return contents.has(quotaEntryKey('offline')) && contents.has(quotaEntryKey('online'));
      });
      const contents = await bucketContents(await openBucket(own, prefix));
      expect(contents.get(quotaEntryKey('online'))).toEqual(quota('online', 1));
      expect(contents.size).toBe(2);
    } finally {
      await admin.app.close();
      await own?.close();
      await stopProcess(server, 'SIGKILL');
      for (const dir of stores) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shuts down promptly while NATS is unreachable and stops dialling', async () => {
    const port = await freePort();
    const monitor = await freePort();
    const admin = await startAdmin(`nats://127.0.0.1:${port}`, `${FILE_PREFIX}.down`);
    await sleep(1_200); // a few dial attempts
    expect(admin.connection.isUp).toBe(false);
    const started = Date.now();
    await admin.app.close();
    expect(Date.now() - started).toBeLessThan(2_000);

    // Had the dial loop survived the close, it would connect to a server that comes up now.
    const store = mkdtempSync(join(tmpdir(), 'admin-control-js-'));
    const server = await startNatsServer(port, { storeDir: store, monitorPort: monitor });
    try {
      await sleep(1_500);
      const connz = (await (await fetch(`http://127.0.0.1:${monitor}/connz`)).json()) as Json;
      expect(connz['num_connections']).toBe(0);
    } finally {
      await stopProcess(server, 'SIGKILL');
      rmSync(store, { recursive: true, force: true });
    }
  });
});
