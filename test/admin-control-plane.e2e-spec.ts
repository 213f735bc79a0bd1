/**
 * The admin control plane end to end (issue 5 point 7): a real admin process, two limiter
 * processes, NATS with JetStream and SQLite files. Quotas changed through GraphQL reach both
 * limiters within 1 s, survive an admin restart, are audited; stats are pushed and add up.
 */
import { controlNames, quotaEntryKey } from '@app/contracts';
import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect, type NatsConnection } from 'nats';
import {
  collect,
  gql,
  gqlData,
  startAdmin,
  subscriptionClient,
  type AdminProcess,
} from './support/admin-process';
import { httpAcquire, post, sleep, type Json } from './support/limiter-http';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';

jest.setTimeout(120_000);

const TOKEN = 'admin-secret';
const ALICE = 'alice-secret-0123456789';
const READ = 'read-secret';
/** Alice's named token; the X-Actor header claims someone else, and is not believed. */
const AUTH = { authorization: `Bearer ${ALICE}`, 'x-actor': 'mallory' };
const prefix = uniquePrefix();
const dirs = [
  mkdtempSync(join(tmpdir(), 'admin-')),
  mkdtempSync(join(tmpdir(), 'lim-a-')),
  mkdtempSync(join(tmpdir(), 'lim-b-')),
];
const [adminDir, dirA, dirB] = dirs as [string, string, string];
const common = { NATS_SUBJECT_PREFIX: prefix, NATS_URL: 'nats://127.0.0.1:4222' };
const adminEnv = {
  ...common,
  DATA_DIR: adminDir,
  ADMIN_TOKEN: TOKEN,
  ADMIN_TOKENS: `alice:${ALICE}`,
  ADMIN_READ_TOKEN: READ,
};

let admin: AdminProcess;
let limiters: LimiterProcess[] = [];
let nc: NatsConnection;

const UPSERT = `mutation Up($input: QuotaInput!) { upsertQuota(input: $input) { name version limits { limit } } }`;
// Fixed windows are aligned to multiples of windowMs since the epoch, so a 1-minute window
// would reset the counts whenever a test runs across a minute boundary. This one first ends
// in the year 33658.
const WINDOW_MS = 1e15;
const quotaInput = (name: string, limit: number): Json => ({
  name,
  match: `${name}-*`,
  limits: [{ name: 'total', limit, windowMs: WINDOW_MS, algorithm: 'fixed_window' }],
});

/** Polls decide on a limiter until the quota's limit is `limit`; the instant it was seen. */
async function seenLimit(limiter: LimiterProcess, quota: string, limit: number): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const reply = await post(limiter.url, '/v1/decide', { key: `${quota}-probe`, quota });
    if (reply['limit'] === limit) return Date.now();
    if (Date.now() > deadline) throw new Error(`limit ${limit} not seen: ${JSON.stringify(reply)}`);
    await sleep(5);
  }
}

beforeAll(async () => {
  nc = await connect({ servers: common.NATS_URL });
  // Settled one by one, so that afterAll stops those that started even when another did not.
  const started = await Promise.allSettled([
    startAdmin(adminEnv),
    startLimiter({ ...common, DATA_DIR: dirA }),
    startLimiter({ ...common, DATA_DIR: dirB }),
  ]);
  const [a, ...ls] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  admin = a!;
  limiters = ls.filter((l) => l !== undefined);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
});

afterAll(async () => {
  await Promise.all([admin?.stop(), ...limiters.map((l) => l.stop())]);
  const jsm = await nc.jetstreamManager();
  await jsm.streams.delete(`KV_${controlNames(prefix).bucket}`).catch(() => undefined);
  await nc.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('admin control plane with two limiters', () => {
  it('lowers a quota from 100 to 10 and both limiters answer 429 within 1 s', async () => {
    await gqlData(admin.url, UPSERT, { input: quotaInput('api', 100) }, AUTH);
    await Promise.all(limiters.map((l) => seenLimit(l, 'api', 100)));

    const changedAt = Date.now();
    const data = await gqlData<{ upsertQuota: Json }>(
      admin.url,
      UPSERT,
      { input: quotaInput('api', 10) },
      AUTH,
    );
    expect(data.upsertQuota).toMatchObject({ name: 'api', version: 2, limits: [{ limit: 10 }] });
    const seen = await Promise.all(limiters.map((l) => seenLimit(l, 'api', 10)));
    for (const at of seen) expect(at - changedAt).toBeLessThan(1000);

    for (const [i, limiter] of limiters.entries()) {
      const key = `api-user-${i}`;
      const codes: number[] = [];
      for (let n = 0; n < 11; n++)
        codes.push(Number((await httpAcquire(limiter.url, { key, quota: 'api' }))['status']));
      expect(codes.filter((c) => c === 200)).toHaveLength(10);
      expect(codes[10]).toBe(429);
    }
  });

  it('stores, publishes and audits nothing for an upsert that changes nothing', async () => {
    const kv = await nc.jetstream().views.kv(controlNames(prefix).bucket, { bindOnly: true });
    const before = await kv.get(quotaEntryKey('api'));
    const audited = async () =>
      (await gqlData<{ auditLog: Json[] }>(admin.url, '{ auditLog(limit: 1000) { at } }', {}, AUTH))
        .auditLog.length;
    const entries = await audited();
    const data = await gqlData<{ upsertQuota: Json }>(
      admin.url,
      UPSERT,
      { input: quotaInput('api', 10) },
      AUTH,
    );
    expect(data.upsertQuota).toMatchObject({ name: 'api', version: 2 });
    expect((await kv.get(quotaEntryKey('api')))?.revision).toBe(before?.revision);
    expect(await audited()).toBe(entries);
  });

  it('writes the audit entry with who, what, before and after', async () => {
    const data = await gqlData<{ auditLog: Json[] }>(
      admin.url,
      '{ auditLog(limit: 10) { actor action target before after } }',
      {},
      AUTH,
    );
    const entry = data.auditLog.find(
      (e) => e['action'] === 'upsertQuota' && e['target'] === 'api' && e['before'] !== null,
    );
    expect(entry).toBeDefined();
    expect(entry!['actor']).toBe('alice');
    expect(JSON.parse(String(entry!['before']))).toMatchObject({
      spec: { limits: [{ limit: 100 }] },
    });
    expect(JSON.parse(String(entry!['after']))).toMatchObject({
      spec: { limits: [{ limit: 10 }] },
    });
  });

  it('refuses unauthorised mutations and reads, and changes nothing', async () => {
    const none = await gql(admin.url, UPSERT, { input: quotaInput('api', 1000) });
    expect(none.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const wrong = await gql(
      admin.url,
      UPSERT,
      { input: quotaInput('api', 1000) },
      { authorization: 'Bearer nope' },
    );
    expect(wrong.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const readOnly = await gql(
      admin.url,
      UPSERT,
      { input: quotaInput('api', 1000) },
      { authorization: `Bearer ${READ}` },
    );
    expect(readOnly.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const anonymousRead = await gql(admin.url, '{ quotas { name } }');
    expect(anonymousRead.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    const read = await gqlData<{ quota: Json }>(
      admin.url,
      '{ quota(name: "api") { version limits { limit } } }',
      {},
      { authorization: `Bearer ${READ}` },
    );
    expect(read.quota).toEqual({ version: 2, limits: [{ limit: 10 }] });
    const reply = await post(limiters[0]!.url, '/v1/decide', { key: 'api-x', quota: 'api' });
    expect(reply['limit']).toBe(10);
  });

  it('pushes statsUpdated at least once a second with counts equal to the admitted requests', async () => {
    await gqlData(admin.url, UPSERT, { input: quotaInput('stats', 5) }, AUTH);
    await Promise.all(limiters.map((l) => seenLimit(l, 'stats', 5)));
    const client = subscriptionClient(admin.url, { authorization: `Bearer ${READ}` });
    const sub = collect<{ statsUpdated: { at: string; replicas: number; quotas: Json[] } }>(
      client,
      'subscription { statsUpdated(quota: "stats") { at replicas quotas { quota approved denied scope } } }',
    );
    try {
      let admitted = 0;
      let refused = 0;
      for (const [i, limiter] of limiters.entries()) {
        for (let k = 0; k < 3; k++) {
          for (let n = 0; n < 7; n++) {
            const r = await httpAcquire(limiter.url, { key: `stats-${i}-${k}`, quota: 'stats' });
            if (r['status'] === 200) admitted++;
            else refused++;
          }
        }
      }
      expect(admitted).toBe(30);
      expect(refused).toBe(12);
      const started = Date.now();
      const deadline = started + 5000;
      let last: Json | undefined;
      while (Date.now() < deadline) {
        const update = sub.values.at(-1)?.statsUpdated;
        last = update?.quotas[0];
        if (update?.replicas === 2 && last?.['approved'] === admitted && last['denied'] === refused)
          break;
        await sleep(100);
      }
      expect(last).toMatchObject({
        quota: 'stats',
        approved: admitted,
        denied: refused,
        scope: 'local',
      });
      // Four more updates, stamped by the admin's clock about a second apart. (Counting those
      // that arrive in 3.1 s left 100 ms for the admin's timer and the socket on a busy machine.)
      const before = sub.values.length;
      await waitUntil('four more updates', () => sub.values.length - before >= 4, 10_000);
      const stamps = sub.values.slice(before).map((v) => Date.parse(v.statsUpdated.at));
      const meanGap = (stamps.at(-1)! - stamps[0]!) / (stamps.length - 1);
      expect(meanGap).toBeLessThan(1_500);
      expect(sub.errors).toEqual([]);
    } finally {
      sub.stop();
      await client.dispose();
    }
  });

  it('refuses a subscription without the read token', async () => {
    const client = subscriptionClient(admin.url, {});
    const sub = collect(client, 'subscription { quotaChanged { name } }');
    await sleep(1000);
    expect(sub.values).toEqual([]);
    expect(sub.errors.length).toBeGreaterThan(0);
    // Mercurius refuses with a `connection_error` frame (message Forbidden) and closes; the
    // graphql-ws client reports that frame itself, which tells this refusal from other failures.
    expect(JSON.stringify(sub.errors.map(String))).toMatch(/connection_error/);
    sub.stop();
    await client.dispose();
  });

  it('asks every limiter about a key and resets it everywhere', async () => {
    const key = 'stats-0-0';
    const before = await gqlData<{ keyStats: Json }>(
      admin.url,
      'query K($key: String!) { keyStats(key: $key, quota: "stats") { key quota replicas approved scope limits { name used remaining } } }',
      { key },
      AUTH,
    );
    expect(before.keyStats).toMatchObject({
      key,
      quota: 'stats',
      replicas: 2,
      scope: 'local', // summed over both replicas
      limits: [{ name: 'total', used: 5, remaining: 0 }],
    });
    const reset = await gqlData<{ resetKey: Json }>(
      admin.url,
      'mutation { resetKey(key: "stats-0-0", quota: "stats") { reset replicas } }',
      {},
      AUTH,
    );
    expect(reset.resetKey).toEqual({ reset: true, replicas: 2 });
    const after = await httpAcquire(limiters[0]!.url, { key, quota: 'stats' });
    expect(after['status']).toBe(200);
    const unknown = await gql(admin.url, '{ keyStats(key: "k", quota: "nope") { key } }', {}, AUTH);
    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it("serves an enabled provider's models and follows setModelQuota", async () => {
    await gqlData(
      admin.url,
      'mutation { setProviderEnabled(name: "openai", enabled: true) { enabled } }',
      {},
      AUTH,
    );
    await gqlData(
      admin.url,
      'mutation { setModelQuota(provider: "openai", model: "gpt-4o", maxRpm: 3, maxTpm: 1000, maxRpd: 0) { name } }',
      {},
      AUTH,
    );
    await Promise.all(limiters.map((l) => seenLimit(l, 'gpt-4o', 3)));
    const codes: unknown[] = [];
    for (let n = 0; n < 4; n++)
      codes.push(
        (
          await httpAcquire(limiters[1]!.url, { key: 'gpt-4o', cost: { requests: 1, tokens: 100 } })
        )['status'],
      );
    expect(codes).toEqual([200, 200, 200, 429]);
    await gqlData(
      admin.url,
      'mutation { setProviderEnabled(name: "openai", enabled: false) { enabled } }',
      {},
      AUTH,
    );
    const deadline = Date.now() + 2000;
    let status: unknown;
    do {
      status = (await post(limiters[0]!.url, '/v1/decide', { key: 'gpt-4o', quota: 'gpt-4o' }))[
        'status'
      ];
    } while (status !== 404 && Date.now() < deadline && (await sleep(20), true));
    expect(status).toBe(404);
  });

  it('keeps every quota across an admin restart, and limiters keep serving meanwhile', async () => {
    expect(await admin.stop()).toBe(0);
    const whileDown = await post(limiters[0]!.url, '/v1/decide', { key: 'api-y', quota: 'api' });
    expect(whileDown['limit']).toBe(10);
    admin = await startAdmin(adminEnv);
    const data = await gqlData<{ quotas: Json[] }>(
      admin.url,
      '{ quotas { name version limits { limit } } }',
      {},
      AUTH,
    );
    expect(data.quotas).toEqual(
      expect.arrayContaining([{ name: 'api', version: 2, limits: [{ limit: 10 }] }]),
    );
    await gqlData(admin.url, UPSERT, { input: quotaInput('api', 20) }, AUTH);
    await Promise.all(limiters.map((l) => seenLimit(l, 'api', 20)));
  });

  it('gives a limiter that starts later the current quotas', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lim-c-'));
    const late = await startLimiter({ ...common, DATA_DIR: dir });
    try {
      await seenLimit(late, 'api', 20);
    } finally {
      await late.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("lists the quotas a limiter reports from its config file, read-only, and the admin's over them", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lim-cfg-'));
    const configFile = join(dir, 'quotas.yaml');
    writeFileSync(
      configFile,
      [
        'quotas:',
        '  - { name: from-file, match: "file-*", limits: [{ name: rps, limit: 9, window: 1s }] }',
        '  - { name: api, match: "api-*", limits: [{ name: rps, limit: 1, window: 1s }] }',
      ].join('\n'),
    );
    const late = await startLimiter({ ...common, DATA_DIR: dir, CONFIG_FILE: configFile });
    try {
      interface Row {
        name: string;
        source: string;
        limits: unknown;
        readOnly: boolean;
        overrideHint: string | null;
        reported: boolean;
      }
      let rows: Row[] = [];
      const deadline = Date.now() + 5000;
      do {
        ({ quotasInForce: rows } = await gqlData<{ quotasInForce: Row[] }>(
          admin.url,
          '{ quotasInForce { name source limits { limit } readOnly overrideHint reported } }',
          {},
          { authorization: `Bearer ${READ}` },
        ));
      } while (
        !rows.some((q) => q.name === 'from-file') &&
        Date.now() < deadline &&
        (await sleep(100), true)
      );
      expect(rows.find((q) => q.name === 'from-file')).toEqual({
        name: 'from-file',
        source: 'config_file',
        limits: null,
        readOnly: true,
        overrideHint: expect.stringMatching(/config file.*admin quota named from-file/) as unknown,
        reported: true,
      });
      // The admin's quota of the same name replaces the file's on the limiter.
      expect(rows.find((q) => q.name === 'api')).toMatchObject({
        source: 'admin',
        readOnly: false,
      });
      expect(rows.find((q) => q.name === 'default')).toMatchObject({
        source: 'default',
        reported: true,
      });
      await seenLimit(late, 'api', 20);
    } finally {
      await late.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('imports GoCC JSON and go-ratelimit YAML with its usage state', async () => {
    const gocc = JSON.stringify({
      keys: [{ key_pattern: 'gocc-*', max_requests_per_window: 7, window_millis: 60000 }],
    });
    const first = await gqlData<{ importConfig: Json }>(
      admin.url,
      'mutation I($d: String!) { importConfig(document: $d, format: gocc) { source quotas } }',
      { d: gocc },
      AUTH,
    );
    expect(first.importConfig['source']).toBe('gocc');
    const [goccQuota] = first.importConfig['quotas'] as string[];
    expect(goccQuota).toBeDefined();
    await Promise.all(limiters.map((l) => seenLimit(l, goccQuota!, 7)));

    const now = new Date().toISOString();
    const yaml = [
      'quotas:',
      '  team-model: { max_rpm: 10, max_tpm: 5000, max_rpd: 0 }',
      'state:',
      '  team-model:',
      `    requests: [${now}, ${now}, ${now}]`,
      `    tokens: [{ time: ${now}, count: 1200 }]`,
      `    day_start: ${now}`,
      '    day_count: 3',
    ].join('\n');
    const second = await gqlData<{ importConfig: Json }>(
      admin.url,
      'mutation I($d: String!) { importConfig(document: $d, format: yaml) { source quotas usageRecorded usageFailed } }',
      { d: yaml },
      AUTH,
    );
    expect(second.importConfig).toMatchObject({
      source: 'go-ratelimit',
      quotas: ['team-model'],
      usageRecorded: 1,
      usageFailed: 0,
    });
    const stats = await gqlData<{ keyStats: { limits: Json[] } }>(
      admin.url,
      '{ keyStats(key: "team-model", quota: "team-model") { limits { name used } } }',
      {},
      AUTH,
    );
    expect(stats.keyStats.limits).toEqual(
      expect.arrayContaining([
        { name: 'rpm', used: 3 },
        { name: 'tpm', used: 1200 },
      ]),
    );
  });

  it("imports go-ratelimit's SQLite state with the project's script, as docs/migrating.md shows", async () => {
    const path = join(adminDir, 'go-ratelimit.db');
    const db = new Database(path);
    db.exec(`CREATE TABLE quotas (model TEXT PRIMARY KEY, max_rpm INTEGER NOT NULL DEFAULT 0,
        max_tpm INTEGER NOT NULL DEFAULT 0, max_rpd INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE requests (model TEXT NOT NULL, ts INTEGER NOT NULL);
      CREATE TABLE tokens (model TEXT NOT NULL, ts INTEGER NOT NULL, count INTEGER NOT NULL);
      CREATE TABLE daily (model TEXT PRIMARY KEY, day_start INTEGER NOT NULL,
        day_count INTEGER NOT NULL DEFAULT 0);`);
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    db.prepare('INSERT INTO quotas VALUES (?, ?, ?, ?)').run('sqlite-model', 20, 9000, 0);
    for (let i = 1n; i <= 4n; i++) {
      db.prepare('INSERT INTO requests VALUES (?, ?)').run('sqlite-model', nowNs - i * 1_000_000n);
    }
    db.prepare('INSERT INTO tokens VALUES (?, ?, ?)').run('sqlite-model', nowNs, 2500);
    db.close();

    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '-r',
        '@swc-node/register',
        'scripts/import-go-ratelimit.ts',
        path,
        '--import',
        `${admin.url}/graphql`,
      ],
      { env: { ...process.env, ADMIN_TOKEN: TOKEN } },
    );
    expect(JSON.parse(stdout)).toMatchObject({
      data: {
        importConfig: { source: 'go-ratelimit', quotas: ['sqlite-model'], usageRecorded: 1 },
      },
    });
    const stats = await gqlData<{ keyStats: { limits: Json[] } }>(
      admin.url,
      '{ keyStats(key: "sqlite-model", quota: "sqlite-model") { limits { name used } } }',
      {},
      AUTH,
    );
    expect(stats.keyStats.limits).toEqual(
      expect.arrayContaining([
        { name: 'rpm', used: 4 },
        { name: 'tpm', used: 2500 },
      ]),
    );
  });
});
