/**
 * Limiters following the admin control plane on the shared NATS: this test plays the admin,
 * writing the JetStream KV bucket with nats.js (encodeEntry, signed with the test's control key
 * as the admin signs) and asking every replica over the control subjects. Two limiters follow the
 * bucket; a third restarts with NATS unreachable and serves the stored copy; a fourth starts
 * after the entries were written (admin down).
 */
import {
  controlNames,
  encodeEntry,
  PROVIDER_MINUTE_MS,
  quotaEntryKey,
  STATS_REPORT_EVERY_MS,
  type ControlProvider,
  type ControlQuota,
  type KeyStats,
  type ReplicaAnswer,
  type StatsReport,
} from '@app/contracts';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createInbox, type KV, type NatsConnection } from 'nats';
import type { ControlBucket } from '../apps/admin/src/control/bucket-writes';
import { adminRequestHeaders, writeAsAdmin } from './support/control-keys';
import { httpAcquire, post, sleep, type Json } from './support/limiter-http';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(120_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const WINDOW_MS = 10_000;

const apiQuota = (limit: number, version: number): ControlQuota => ({
  spec: {
    name: 'api',
    match: 'api-*',
    limits: [
      { name: 'rps', unit: 'requests', limit, windowMs: WINDOW_MS, algorithm: 'fixed_window' },
    ],
  },
  version,
  updatedAt: Date.now(),
});
const plainQuota = (name: string, limit: number): ControlQuota => ({
  spec: {
    name,
    limits: [
      { name: 'rph', unit: 'requests', limit, windowMs: 3_600_000, algorithm: 'sliding_window' },
    ],
  },
  version: 1,
  updatedAt: Date.now(),
});
const openai: ControlProvider = {
  name: 'openai',
  enabled: true,
  models: [{ model: 'gpt-4o', maxRpm: 50, maxTpm: 100_000, maxRpd: 0 }],
};

/** Polls `probe` every 20 ms until it holds; fails after `ms`. */
async function eventually(what: string, probe: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

/** Control sets the limiter put in force so far (its /metrics counter). */
async function setsApplied(limiter: LimiterProcess): Promise<number> {
  const text = await (await fetch(`${limiter.url}/metrics`)).text();
  const series = 'ratelimit_control_sets_total{result="applied"} ';
  return Number(
    text
      .split('\n')
      .find((line) => line.startsWith(series))
      ?.slice(series.length),
  );
}

async function readyz(limiter: LimiterProcess): Promise<Json> {
  return (await (await fetch(`${limiter.url}/readyz`)).json()) as Json;
}

/**
 * Publishes `payload` on `subject`, signed as the admin signs it, and collects every answer for
 * `ms` (every replica answers).
 */
async function askAll(
  nc: NatsConnection,
  subject: string,
  payload: string,
  expected: number,
  ms = 3_000,
): Promise<ReplicaAnswer<unknown>[]> {
  const inbox = createInbox();
  const answers: ReplicaAnswer<unknown>[] = [];
  const sub = nc.subscribe(inbox, { max: expected });
  const timer = setTimeout(() => sub.unsubscribe(), ms);
  nc.publish(subject, Buffer.from(payload), {
    reply: inbox,
    headers: adminRequestHeaders(subject, payload),
  });
  for await (const msg of sub) answers.push(msg.json<ReplicaAnswer<unknown>>());
  clearTimeout(timer);
  return answers;
}

describe('limiters follow the admin control bucket', () => {
  const prefix = uniquePrefix();
  const names = controlNames(prefix);
  const root = mkdtempSync(join(tmpdir(), 'limiter-control-'));
  const running: LimiterProcess[] = [];
  let nc: NatsConnection;
  let kv: KV;
  /** The bucket written as the admin writes it (signed). */
  let bucket: ControlBucket;
  let a: LimiterProcess;
  let b: LimiterProcess;
  /** Per run: ms from the KV put to the new limit seen on both, and to the 429 on both. */
  const timings: string[] = [];

  const put = async (entry: Parameters<typeof encodeEntry>[0]): Promise<void> => {
    const { key, value } = encodeEntry(entry);
    await bucket.put(key, value);
  };
  const start = async (name: string, env: Record<string, string> = {}): Promise<LimiterProcess> => {
    const limiter = await startLimiter({
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `q-${randomUUID()}`,
      DATA_DIR: join(root, name),
      ...env,
    });
    running.push(limiter);
    return limiter;
  };
  const synced = (limiter: LimiterProcess): Promise<void> =>
    eventually('control synced', async () => (await readyz(limiter))['control'] === 'synced');
  const both = (): LimiterProcess[] => [a, b];

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    // As the admin would: limiters never create the bucket (they bind to it and wait for it).
    kv = await nc.jetstream().views.kv(names.bucket, { history: 1 });
    bucket = writeAsAdmin(nc, kv, names.bucket);
  });

  afterAll(async () => {
    for (const limiter of running) await limiter.stop('SIGKILL');
    // The limiters are gone, so nobody recreates the bucket.
    await kv?.destroy().catch(() => undefined);
    await nc?.close();
    rmSync(root, { recursive: true, force: true });
    if (timings.length > 0) {
      process.stdout.write(
        `KV put -> limit 10 seen / 11th acquire refused, on both limiters (ms): ${timings.join(', ')}\n`,
      );
    }
  });

  it('starts two limiters that watch the bucket (no admin entries yet)', async () => {
    [a, b] = await Promise.all([start('a'), start('b')]);
    await Promise.all(both().map(synced));
    for (const l of both()) {
      expect(await readyz(l)).toMatchObject({ ready: true, nats: 'subscribed', control: 'synced' });
      expect(await httpAcquire(l.url, { key: 'api-1', quota: 'api' })).toMatchObject({
        status: 404,
        code: 'UNKNOWN_QUOTA',
      });
    }
  });

  it('puts an added quota in force on both', async () => {
    await put({ kind: 'quota', quota: apiQuota(100, 1) });
    for (const l of both()) {
      await eventually(
        'api in force',
        async () => (await httpAcquire(l.url, { key: 'api-1', quota: 'api' }))['limit'] === 100,
      );
      // Resolved by its match too.
      expect(await post(l.url, '/v1/decide', { key: 'api-2' })).toMatchObject({
        quota: 'api',
        limit: 100,
      });
    }
  });

  it('puts a lowered limit in force on both within a second: 429 after 10', async () => {
    for (let run = 0; run < 3; run++) {
      if (run > 0) {
        await put({ kind: 'quota', quota: apiQuota(100, 2 + 2 * run) });
        await eventually('back to 100', async () => {
          const limits = await Promise.all(
            both().map(async (l) => (await post(l.url, '/v1/decide', { key: 'api-x' }))['limit']),
          );
          return limits.every((limit) => limit === 100);
        });
      }
      // Keep the 10 admissions and the refusal inside one fixed window.
      await awayFromWindowEnd(WINDOW_MS, 3_000);
      const key = `api-lowered-${run}-${randomUUID()}`;
      const putAt = Date.now();
      await put({ kind: 'quota', quota: apiQuota(10, 3 + 2 * run) });
      const refusedAfter = await Promise.all(
        both().map(async (l) => {
          await eventually(
            'limit 10',
            async () => (await post(l.url, '/v1/decide', { key, quota: 'api' }))['limit'] === 10,
          );
          const seen = Date.now() - putAt;
          for (let i = 0; i < 10; i++) {
            expect(await httpAcquire(l.url, { key, quota: 'api' })).toMatchObject({
              status: 200,
              limit: 10,
            });
          }
          const refused = await httpAcquire(l.url, { key, quota: 'api' });
          expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMITED', limit: 10 });
          return { seen, refused: Date.now() - putAt };
        }),
      );
      const seen = Math.max(...refusedAfter.map((t) => t.seen));
      const refused = Math.max(...refusedAfter.map((t) => t.refused));
      timings.push(`${seen}/${refused}`);
      // In force within a second of the put; the 11 acquires after it are this test's own work,
      // whose time on a busy machine says nothing about propagation.
      expect(seen).toBeLessThan(1_000);
    }
  });

  it('removes a deleted quota on both: UNKNOWN_QUOTA', async () => {
    await bucket.delete(quotaEntryKey('api'));
    for (const l of both()) {
      await eventually(
        'api deleted',
        async () => (await httpAcquire(l.url, { key: 'api-1', quota: 'api' }))['status'] === 404,
      );
      expect(await httpAcquire(l.url, { key: 'api-1', quota: 'api' })).toMatchObject({
        code: 'UNKNOWN_QUOTA',
      });
      // The key falls back to the default quota.
      expect(await post(l.url, '/v1/decide', { key: 'api-1' })).toMatchObject({ quota: 'default' });
    }
  });

  it('serves the models of an enabled provider entry, and only those', async () => {
    await put({ kind: 'provider', provider: openai });
    for (const l of both()) {
      await eventually(
        'gpt-4o served',
        async () => (await post(l.url, '/v1/decide', { key: 'gpt-4o' }))['quota'] === 'gpt-4o',
      );
      expect(await post(l.url, '/v1/decide', { key: 'gpt-4o' })).toMatchObject({
        quota: 'gpt-4o',
        limit: 50,
        limitName: 'rpm',
      });
      // The admin's profile lists gpt-4o alone: the built-in table does not apply.
      expect(await post(l.url, '/v1/decide', { key: 'gpt-4o-mini' })).toMatchObject({
        quota: 'default',
      });
    }
  });

  it('applies an import of many entries in few steps', async () => {
    const before = await Promise.all(both().map(setsApplied));
    const imported = Array.from({ length: 200 }, (_, i) => plainQuota(`bulk-${i}`, 1000 + i));
    await Promise.all(imported.map((quota) => put({ kind: 'quota', quota })));
    for (const l of both()) {
      await eventually(
        'the last entry imported',
        async () =>
          (await post(l.url, '/v1/decide', { key: 'k', quota: 'bulk-199' }))['limit'] === 1199,
      );
    }
    const steps = (await Promise.all(both().map(setsApplied))).map((n, i) => n - before[i]!);
    process.stdout.write(`200 entries imported in ${steps.join(' and ')} steps\n`);
    for (const n of steps) expect(n).toBeLessThanOrEqual(20);
    await Promise.all(imported.map(({ spec }) => bucket.delete(quotaEntryKey(spec.name))));
    for (const l of both()) {
      await eventually(
        'the import deleted',
        async () =>
          (await post(l.url, '/v1/decide', { key: 'k', quota: 'bulk-0' }))['status'] === 404,
      );
    }
  });

  it('publishes stats reports from both replicas with their approved counts', async () => {
    const sub = nc.subscribe(names.statsReport);
    const latest = new Map<string, StatsReport>();
    const counts = new Map<string, number>();
    void (async () => {
      for await (const msg of sub) {
        const report = msg.json<StatsReport>();
        latest.set(report.replica, report);
        counts.set(report.replica, (counts.get(report.replica) ?? 0) + 1);
      }
    })();
    // The next test reads these as the key's approved count (~3 s from now), which is counted per
    // window of the first limit, rpm: aligned to the minute although rpm slides. Not across it.
    await awayFromWindowEnd(PROVIDER_MINUTE_MS, 10_000);
    for (let i = 0; i < 2; i++)
      expect((await httpAcquire(a.url, { key: 'gpt-4o' }))['status']).toBe(200);
    expect((await httpAcquire(b.url, { key: 'gpt-4o' }))['status']).toBe(200);
    const approved = (): number[] =>
      [...latest.values()]
        .map((r) => r.quotas.find((q) => q.quota === 'gpt-4o')?.approved ?? -1)
        .sort();
    await eventually(
      'reports with 2 and 1 approved',
      () => Promise.resolve(approved().join() === '1,2'),
      5_000,
    );
    const since = Date.now();
    counts.clear();
    await sleep(STATS_REPORT_EVERY_MS * 4 + 200);
    sub.unsubscribe();
    // About one report per replica every STATS_REPORT_EVERY_MS.
    expect(counts.size).toBe(2);
    for (const n of counts.values()) expect(n).toBeGreaterThanOrEqual(3);
    for (const report of latest.values()) {
      expect(report.at).toBeGreaterThanOrEqual(since - 1_000);
      expect(report.quotas.find((q) => q.quota === 'gpt-4o')).toMatchObject({
        denied: 0,
        queued: 0,
        activeKeys: 1,
      });
    }
  });

  it('answers keyStats and resetKey from every replica', async () => {
    const stats = await askAll(nc, names.keyStats, JSON.stringify({ key: 'gpt-4o' }), 2);
    expect(stats).toHaveLength(2);
    expect(new Set(stats.map((s) => s.replica)).size).toBe(2);
    for (const s of stats) expect(s).toMatchObject({ scope: 'local', value: { quota: 'gpt-4o' } });
    expect(stats.map((s) => (s.value as KeyStats).approved).sort()).toEqual([1, 2]);

    const reset = await askAll(nc, names.resetKey, JSON.stringify({ key: 'gpt-4o' }), 2);
    expect(reset.map((r) => r.value)).toEqual([true, true]);
    const after = await askAll(nc, names.keyStats, JSON.stringify({ key: 'gpt-4o' }), 2);
    expect(after.map((s) => (s.value as KeyStats).limits[0]?.used)).toEqual([0, 0]);

    const unknown = await askAll(nc, names.keyStats, '{"key":"k","quota":"nope"}', 2);
    expect(unknown.map((s) => s.code)).toEqual(['UNKNOWN_QUOTA', 'UNKNOWN_QUOTA']);
  });

  it('answers malformed requests and skips malformed entries without crashing', async () => {
    for (const [payload, field] of [
      ['not json', 'body'],
      ['{"quota":"x"}', 'key'],
      ['{"key":"k","quota":"a b"}', 'quota'],
    ] as const) {
      for (const subject of [names.keyStats, names.resetKey]) {
        const answers = await askAll(nc, subject, payload, 2);
        expect(answers).toHaveLength(2);
        for (const answer of answers) {
          expect(answer.code).toBe('INVALID_REQUEST');
          expect(answer.reason).toMatch(new RegExp(`^${field}`));
        }
      }
    }

    await put({ kind: 'quota', quota: plainQuota('steady', 7) });
    await bucket.put(quotaEntryKey('broken'), 'not json at all');
    await bucket.put(
      quotaEntryKey('invalid'),
      JSON.stringify({
        ...plainQuota('invalid', 1),
        spec: { name: 'invalid', limits: [{ name: 'x', limit: -1, window: '1s' }] },
      }),
    );
    await bucket.put('settings.unknown', '{}');
    // A bad new value of a served quota leaves the last good one in force.
    await bucket.put(
      quotaEntryKey('steady'),
      JSON.stringify({ ...plainQuota('steady', 8), version: 0 }),
    );
    await put({ kind: 'quota', quota: plainQuota('after', 3) });
    for (const l of both()) {
      await eventually(
        'the entry after the bad ones',
        async () => (await post(l.url, '/v1/decide', { key: 'k', quota: 'after' }))['limit'] === 3,
      );
      expect((await fetch(`${l.url}/healthz`)).status).toBe(200);
      expect(await post(l.url, '/v1/decide', { key: 'k', quota: 'steady' })).toMatchObject({
        limit: 7,
      });
      expect((await post(l.url, '/v1/decide', { key: 'k', quota: 'invalid' }))['code']).toBe(
        'UNKNOWN_QUOTA',
      );
      expect(l.output()).toContain(`${quotaEntryKey('broken')}: is not JSON`);
      expect(l.output()).toContain(
        `${quotaEntryKey('invalid')}: spec.limits[0].limit: must be an integer >= 0`,
      );
      expect(l.output()).toContain(`${quotaEntryKey('steady')}: version: must be an integer >= 1`);
      expect(l.child.exitCode).toBeNull();
    }
  });

  it('serves the stored set after a restart with NATS unreachable', async () => {
    // Usage of an admin quota with a long window is stored too, and restored into it.
    for (let i = 0; i < 2; i++) {
      expect((await httpAcquire(a.url, { key: 'kept', quota: 'after' }))['status']).toBe(200);
    }
    expect(await a.stop('SIGTERM')).toBe(0);
    const restarted = await start('a', { NATS_URL: 'nats://127.0.0.1:1' });
    // At once: the stored set is in force before the HTTP server listens.
    expect(await post(restarted.url, '/v1/decide', { key: 'gpt-4o' })).toMatchObject({
      quota: 'gpt-4o',
      limit: 50,
    });
    expect(await post(restarted.url, '/v1/decide', { key: 'k', quota: 'steady' })).toMatchObject({
      limit: 7,
    });
    expect(await httpAcquire(restarted.url, { key: 'kept', quota: 'after' })).toMatchObject({
      status: 200,
      limit: 3,
      remaining: 0,
    });
    expect(await readyz(restarted)).toMatchObject({ nats: 'connecting', control: 'cached' });
    expect(await restarted.stop('SIGTERM')).toBe(0);
  });

  it('starts without a stored set when its file is damaged', async () => {
    const dir = join(root, 'damaged');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'limiter-control.sqlite'), 'not a database '.repeat(500));
    const limiter = await start('damaged', { NATS_URL: 'nats://127.0.0.1:1' });
    expect(await post(limiter.url, '/v1/decide', { key: 'gpt-4o' })).toMatchObject({
      quota: 'default',
    });
    expect(await readyz(limiter)).toMatchObject({ control: 'none' });
    expect(limiter.output()).toMatch(/limiter-control\.sqlite is damaged .* moved to/);
    expect(await limiter.stop('SIGTERM')).toBe(0);
  });

  it('gives a limiter started later (admin down) the entries in the bucket', async () => {
    const late = await start('late');
    await synced(late);
    expect(await post(late.url, '/v1/decide', { key: 'gpt-4o' })).toMatchObject({
      quota: 'gpt-4o',
      limit: 50,
    });
    expect(await post(late.url, '/v1/decide', { key: 'k', quota: 'after' })).toMatchObject({
      limit: 3,
    });
    // Nothing was stored for it, so the bad value of `steady` leaves that quota out.
    expect((await post(late.url, '/v1/decide', { key: 'k', quota: 'steady' }))['code']).toBe(
      'UNKNOWN_QUOTA',
    );
    expect(await late.stop('SIGTERM')).toBe(0);
    expect(await b.stop('SIGTERM')).toBe(0);
  });
});
