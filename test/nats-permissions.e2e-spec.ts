/**
 * The NATS users the deployments ship (k8s/nats/nats.conf), on a real nats-server started with that
 * very file and the passwords scripts/secrets.ts makes. A backend (user `caller`) may call the
 * limiter and nothing else: it cannot write the control bucket, reset a key, publish a stats report
 * or take requests off the limiters, and it hears nothing on the limiter's and the admin's inboxes
 * (their KV watch deliveries, the answers to their requests). A limiter and an admin, each as its
 * own user, work as they do on a NATS without permissions: acquires, quota changes through the
 * bucket, stats reports, the admin's fan-out questions and usage records; and a bucket large
 * enough for JetStream's flow control replays under both users. Backends with users of their own
 * (the generator's `--callers`) each read only their own replies.
 */
import {
  controlNames,
  DEFAULT_NATS_INBOX_PREFIXES,
  DEFAULT_NATS_QUEUE_GROUP,
  DEFAULT_NATS_SUBJECT_PREFIX,
  encodeEntry,
  natsSubjects,
} from '@app/contracts';
import { RateLimitClient } from '@ratelimit/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, headers, type KV, type NatsConnection } from 'nats';
import {
  callerInboxPrefix,
  callerPasswordVariable,
  natsServerConfig,
} from '../scripts/nats-config';
import { generateSecrets, natsPassword, type Secrets } from '../scripts/secrets';
import { gqlData, startAdmin } from './support/admin-process';
import { natsAcquire, post, type Json } from './support/limiter-http';
import { startLimiter, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import { readyz } from './support/secured-nats';
import { startShippedNats, type ShippedNats } from './support/shipped-nats';

// The file is written for the default prefix and queue group: the apps run with those, on a
// server of this test's own.
const subjects = natsSubjects(DEFAULT_NATS_SUBJECT_PREFIX);
const control = controlNames(DEFAULT_NATS_SUBJECT_PREFIX);
const QUEUE = DEFAULT_NATS_QUEUE_GROUP;
// Fixed windows align to multiples of windowMs since the epoch: this one first ends in 33658.
const FOREVER_MS = 1e15;
const UPSERT = 'mutation Up($input: QuotaInput!) { upsertQuota(input: $input) { version } }';
const RESET =
  'mutation R($key: String!, $quota: String) { resetKey(key: $key, quota: $quota) { reset replicas } }';
const KEY_STATS =
  'query K($key: String!, $quota: String) { keyStats(key: $key, quota: $quota) { replicas } }';
const INBOXES = DEFAULT_NATS_INBOX_PREFIXES;
/** The inboxes each shipped user reads: nats.js's default for callers, the apps' own prefixes. */
const INBOX_OF = { caller: '_INBOX', ...INBOXES } as const;

const passwords = (s: Secrets) => ({
  NATS_CALLER_PASSWORD: s.NATS_CALLER_PASSWORD,
  NATS_LIMITER_PASSWORD: s.NATS_LIMITER_PASSWORD,
  NATS_ADMIN_PASSWORD: s.NATS_ADMIN_PASSWORD,
});

const oneRequest = (name: string, match: string, limit: number) => ({
  name,
  match,
  limits: [
    {
      name: 'total',
      unit: 'requests',
      limit,
      windowMs: FOREVER_MS,
      algorithm: 'fixed_window' as const,
    },
  ],
});

/** A quota entry as the admin writes it in the bucket, written by someone else. */
const forgedQuota = (name: string, limit: number) =>
  encodeEntry({
    kind: 'quota',
    quota: { spec: oneRequest(name, `${name}-*`, limit), version: 1, updatedAt: 0 },
  });

/** The error a promise is refused with (its message), or what it resolved to. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    return `resolved: ${JSON.stringify(await promise)}`;
  } catch (error) {
    return (error as Error).message;
  }
}

/** How the server treats a subscription: refused (the error), or still open after `ms`. */
async function subscriptionOutcome(
  nc: NatsConnection,
  subject: string,
  queue?: string,
  ms = 5_000,
): Promise<string> {
  const sub = nc.subscribe(subject, queue === undefined ? {} : { queue });
  const outcome = (async () => {
    try {
      for await (const msg of sub) return `received ${msg.subject}`;
      return 'ended';
    } catch (error) {
      return (error as Error).message;
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const open = new Promise<string>((r) => (timer = setTimeout(() => r('still subscribed'), ms)));
  const result = await Promise.race([outcome, open]);
  clearTimeout(timer);
  sub.unsubscribe();
  return result;
}

// nats.js's errors quote the server's own message.
const violation = (subject: string) => `'Permissions Violation for Publish to "${subject}"'`;
const subscribeViolation = (subject: string, queue?: string) =>
  `'Permissions Violation for Subscription to "${subject}"${queue === undefined ? '' : ` using queue "${queue}"`}'`;

/** `ratelimit_nats_reply_refused_total` of a limiter. */
async function refusedReplies(limiter: LimiterProcess): Promise<number> {
  const text = await (await fetch(`${limiter.url}/metrics`)).text();
  return Number(/^ratelimit_nats_reply_refused_total (\d+)$/m.exec(text)?.[1] ?? NaN);
}

/** The subjects of every message `nc` receives on `subject` from now on. */
function overhear(nc: NatsConnection, subject: string): string[] {
  const heard: string[] = [];
  nc.subscribe(subject, { callback: (error, msg) => error === null && heard.push(msg.subject) });
  return heard;
}

describe('the NATS users of k8s/nats/nats.conf, on nats-server', () => {
  let dir: string;
  let secrets: Secrets;
  let nats: ShippedNats;
  let limiter: LimiterProcess;
  let admin: LimiterProcess;
  const opened: NatsConnection[] = [];
  const as = async (user: 'caller' | 'limiter' | 'admin'): Promise<NatsConnection> => {
    const key = `NATS_${user.toUpperCase()}_PASSWORD` as keyof ReturnType<typeof passwords>;
    const nc = await connect({
      servers: nats.url,
      user,
      pass: secrets[key],
      inboxPrefix: INBOX_OF[user],
    });
    opened.push(nc);
    return nc;
  };
  /** A limiter's environment, as Compose and k8s/ give it, its DATA_DIR its own. */
  const limiterEnv = (name: string): Record<string, string> => ({
    NATS_URL: nats.url,
    NATS_USER: 'limiter',
    NATS_PASSWORD: secrets.NATS_LIMITER_PASSWORD,
    CONTROL_PUBLIC_KEY: secrets.CONTROL_PUBLIC_KEY,
    REPORT_SEED: secrets.REPORT_SEED,
    DATA_DIR: join(dir, name),
  });
  /** The bucket as the admin app opens it, on `nc`'s user. */
  const bucket = (nc: NatsConnection): Promise<KV> =>
    nc.jetstream({ timeout: 5_000 }).views.kv(control.bucket, { bindOnly: true });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nats-permissions-'));
    secrets = generateSecrets();
    nats = await startShippedNats(dir, passwords(secrets));
    const common = { NATS_URL: nats.url };
    [limiter, admin] = await Promise.all([
      startLimiter(limiterEnv('limiter')),
      startAdmin({
        ...common,
        NATS_USER: 'admin',
        NATS_PASSWORD: secrets.NATS_ADMIN_PASSWORD,
        CONTROL_SEED: secrets.CONTROL_SEED,
        REPORT_PUBLIC_KEYS: secrets.REPORT_PUBLIC_KEYS,
        DATA_DIR: join(dir, 'admin'),
      }),
    ]);
    await waitUntil('limiter subscribed', async () => (await readyz(limiter))['status'] === 200);
    await waitUntil('admin connected', async () => (await readyz(admin))['status'] === 200);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(opened.map((nc) => nc.close()));
    await Promise.all([limiter?.stop(), admin?.stop()]);
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the SDK of a caller through a limiter and an admin that are users of their own', async () => {
    const client = new RateLimitClient({ connection: await as('caller') });
    try {
      expect(await client.acquire({ key: 'alice' })).toMatchObject({ allowed: true, code: 'OK' });

      // A quota changed through the admin reaches the limiter through the bucket.
      await gqlData(admin.url, UPSERT, { input: oneRequest('shipped', 'shipped-*', 1) });
      await waitUntil(
        'the quota in force',
        async () => (await client.decide({ key: 'shipped-1' })).quota === 'shipped',
      );
      expect(await client.acquire({ key: 'shipped-1' })).toMatchObject({ allowed: true });
      expect(await client.acquire({ key: 'shipped-1' })).toMatchObject({ code: 'RATE_LIMITED' });

      // The limiter's stats reports reach the admin.
      await waitUntil('the admitted acquire in the stats', async () => {
        const { stats } = await gqlData<{ stats: Json }>(
          admin.url,
          '{ stats { replicas quotas { quota approved } } }',
        );
        const quotas = stats['quotas'] as { quota: string; approved: number }[];
        return stats['replicas'] === 1 && quotas.some((q) => q.quota === 'shipped' && q.approved);
      });

      // The admin's questions to every limiter, and the answers.
      expect(await gqlData(admin.url, RESET, { key: 'shipped-1', quota: 'shipped' })).toEqual({
        resetKey: { reset: true, replicas: 1 },
      });
      expect(await client.acquire({ key: 'shipped-1' })).toMatchObject({ allowed: true });

      // A usage record from the admin (an import's state) is answered by the queue group.
      const now = new Date().toISOString();
      const imported = await gqlData<{ importConfig: Json }>(
        admin.url,
        'mutation I($d: String!) { importConfig(document: $d, format: yaml) { usageRecorded usageFailed } }',
        {
          d: `quotas:\n  shipped-model: { max_rpm: 10, max_tpm: 0, max_rpd: 0 }\nstate:\n  shipped-model:\n    requests: [${now}]\n`,
        },
      );
      expect(imported.importConfig).toEqual({ usageRecorded: 1, usageFailed: 0 });
      expect(nats.violations()).toEqual([]);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('keeps a caller from writing the bucket, or creating or deleting it', async () => {
    const caller = await as('caller');
    const forged = forgedQuota('forged', 1_000_000);
    const js = caller.jetstream({ timeout: 5_000, checkAPI: false });
    const kv = await js.views.kv(control.bucket, { bindOnly: true });
    expect(await refusal(kv.put(forged.key, forged.value))).toBe(
      violation(`$KV.${control.bucket}.${forged.key}`),
    );
    caller.publish(`$KV.${control.bucket}.${forged.key}`, forged.value);
    expect(await refusal(bucket(caller))).toBe(violation('$JS.API.INFO'));
    const jsm = await caller.jetstreamManager({ checkAPI: false, timeout: 5_000 });
    expect(await refusal(jsm.streams.delete(`KV_${control.bucket}`))).toBe(
      violation(`$JS.API.STREAM.DELETE.KV_${control.bucket}`),
    );

    // The bucket is ordered: once a later change of the admin's is in force, an entry written
    // before it would be too. The forged quota never is.
    await gqlData(admin.url, UPSERT, { input: oneRequest('after-forgery', 'after-forgery-*', 1) });
    await waitUntil(
      'the later change in force',
      async () =>
        (await natsAcquire(caller, subjects.decide, { key: 'after-forgery-1' }))['quota'] ===
        'after-forgery',
    );
    expect(await natsAcquire(caller, subjects.decide, { key: 'forged-1' })).not.toMatchObject({
      quota: 'forged',
    });
    await waitUntil('the plain publish refused', () =>
      nats.violations().includes(`Publish caller $KV.${control.bucket}.${forged.key}`),
    );
  }, 60_000);

  it('keeps a caller from resetting a key or publishing a stats report', async () => {
    const caller = await as('caller');
    await gqlData(admin.url, UPSERT, { input: oneRequest('kept', 'kept-*', 1) });
    await waitUntil(
      'the quota in force',
      async () =>
        (await natsAcquire(caller, subjects.decide, { key: 'kept-1' }))['quota'] === 'kept',
    );
    expect(await natsAcquire(caller, subjects.acquire, { key: 'kept-1' })).toMatchObject({
      code: 'OK',
    });
    expect(await refusal(caller.request(control.resetKey, JSON.stringify({ key: 'kept-1' })))).toBe(
      violation(control.resetKey),
    );
    expect(await natsAcquire(caller, subjects.acquire, { key: 'kept-1' })).toMatchObject({
      code: 'RATE_LIMITED',
    });

    // A forged report, as a replica of the limiters' queue group: the admin (its own user,
    // subscribed like the app) hears the limiter's reports and never this one.
    const adminNc = await as('admin');
    const heard = adminNc.subscribe(control.statsReport);
    await adminNc.flush();
    const h = headers();
    h.set('Ratelimit-Replica', 'forged-replica');
    h.set('Ratelimit-Queue-Group', QUEUE);
    caller.publish(control.statsReport, JSON.stringify({ replica: 'forged-replica' }), {
      headers: h,
    });
    await caller.flush();
    await waitUntil('the report refused', () =>
      nats.violations().includes(`Publish caller ${control.statsReport}`),
    );
    const replicas = new Set<string>();
    for await (const msg of heard) {
      replicas.add(msg.headers?.get('Ratelimit-Replica') ?? '');
      // Four reports of the limiter's (every 500 ms): two seconds after the forgery.
      if (heard.getProcessed() >= 4) break;
    }
    expect(replicas.has('forged-replica')).toBe(false);
    expect(replicas.size).toBe(1);
  }, 60_000);

  it('keeps a caller from taking requests off the limiters, in their queue group or not', async () => {
    const caller = await as('caller');
    for (const subject of [subjects.acquire, subjects.acquireBatch, subjects.decide]) {
      expect(await subscriptionOutcome(caller, subject)).toBe(subscribeViolation(subject));
      expect(await subscriptionOutcome(caller, subject, QUEUE)).toBe(
        subscribeViolation(subject, QUEUE),
      );
    }
    for (const subject of [control.resetKey, control.keyStats, control.statsReport]) {
      expect(await subscriptionOutcome(caller, subject)).toMatch(/^'Permissions Violation/);
    }
    // Still answered by the limiter alone.
    const client = new RateLimitClient({ connection: caller });
    expect(await client.acquire({ key: 'bob' })).toMatchObject({ allowed: true, code: 'OK' });
    await client.close();
  }, 60_000);

  it("keeps a limiter from the admin's writes, and from requests outside its queue group", async () => {
    const nc = await as('limiter');
    const forged = forgedQuota('by-limiter', 5);
    const kv = await bucket(nc);
    expect(await refusal(kv.put(forged.key, forged.value))).toBe(
      violation(`$KV.${control.bucket}.${forged.key}`),
    );
    expect(await refusal(nc.request(control.resetKey, JSON.stringify({ key: 'x' })))).toBe(
      violation(control.resetKey),
    );
    expect(await subscriptionOutcome(nc, subjects.acquire)).toBe(
      subscribeViolation(subjects.acquire),
    );
    expect(await subscriptionOutcome(nc, subjects.acquire, 'elsewhere')).toBe(
      subscribeViolation(subjects.acquire, 'elsewhere'),
    );
    // Nor does it read the callers' replies or the admin's.
    for (const inbox of ['_INBOX.>', `${INBOXES.admin}.>`]) {
      expect(await subscriptionOutcome(nc, inbox)).toBe(subscribeViolation(inbox));
    }
    const adminNc = await as('admin');
    for (const inbox of ['_INBOX.>', `${INBOXES.limiter}.>`]) {
      expect(await subscriptionOutcome(adminNc, inbox)).toBe(subscribeViolation(inbox));
    }
  }, 60_000);

  it("keeps a caller out of the limiter's and the admin's inboxes", async () => {
    const caller = await as('caller');
    for (const subject of [`${INBOXES.limiter}.>`, `${INBOXES.admin}.>`, '>', '*.>']) {
      expect(await subscriptionOutcome(caller, subject)).toBe(subscribeViolation(subject));
    }
  }, 60_000);

  it("keeps a caller from having a limiter answer on JetStream's subjects or the limiter's inbox", async () => {
    // A limiter may publish on any reply subject it was asked to answer (allow_responses): a
    // caller that names the bucket's purge, or the limiter's inbox, must not get it written there.
    const caller = await as('caller');
    const adminNc = await as('admin');
    const limiterNc = await as('limiter');
    const jsm = await adminNc.jetstreamManager({ checkAPI: false, timeout: 5_000 });
    await gqlData(admin.url, UPSERT, { input: oneRequest('unpurged', 'unpurged-*', 1) });
    const entries = (await jsm.streams.info(`KV_${control.bucket}`)).state.messages;
    expect(entries).toBeGreaterThan(0);
    const heardByLimiter = overhear(limiterNc, `${INBOXES.limiter}.>`);
    await limiterNc.flush();
    const refusedBefore = await refusedReplies(limiter);
    const violationsBefore = nats.violations().length;
    const asked = [
      `$JS.API.STREAM.PURGE.KV_${control.bucket}`,
      `$KV.${control.bucket}.quota.unpurged`,
      `${INBOXES.limiter}.forged.1`,
      control.statsReport,
    ];
    for (const reply of asked) {
      caller.publish(subjects.acquire, JSON.stringify({ key: 'unpurged-1' }), { reply });
      caller.publish(
        subjects.acquire,
        JSON.stringify({ pattern: 'acquire', data: { key: 'unpurged-1' }, id: '1' }),
        { reply },
      );
    }
    await caller.flush();
    await waitUntil(
      'every one refused',
      async () => (await refusedReplies(limiter)) - refusedBefore === asked.length * 2,
    );
    // Nothing was charged: the key's one request is still there.
    expect(await natsAcquire(caller, subjects.acquire, { key: 'unpurged-1' })).toMatchObject({
      code: 'OK',
    });
    expect((await jsm.streams.info(`KV_${control.bucket}`)).state.messages).toBe(entries);
    await limiterNc.flush();
    expect(heardByLimiter).toEqual([]);
    expect(nats.violations().slice(violationsBefore)).toEqual([]);
  }, 60_000);

  it("lets a caller on every inbox it may read hear no bucket delivery and no answer of the admin's", async () => {
    const violationsBefore = nats.violations().length;
    const eavesdropper = await as('caller');
    const heard = overhear(eavesdropper, '_INBOX.>');
    await eavesdropper.flush();
    // A backend of the same user: its inboxes are within `_INBOX.>`, which every caller reads.
    const backendNc = await connect({
      servers: nats.url,
      user: 'caller',
      pass: secrets.NATS_CALLER_PASSWORD,
      inboxPrefix: '_INBOX.backend',
    });
    opened.push(backendNc);
    const client = new RateLimitClient({ connection: backendNc });

    // A quota change: the admin's put and its answer, and the KV watches' deliveries to the
    // admin and to the limiter.
    await gqlData(admin.url, UPSERT, { input: oneRequest('overheard', 'overheard-*', 1) });
    await waitUntil(
      'the quota in force',
      async () => (await client.decide({ key: 'overheard-1' })).quota === 'overheard',
    );
    // The admin's questions to every limiter, and their answers.
    expect(await client.acquire({ key: 'overheard-1' })).toMatchObject({ allowed: true });
    expect(await gqlData(admin.url, KEY_STATS, { key: 'overheard-1', quota: 'overheard' })).toEqual(
      { keyStats: { replicas: 1 } },
    );
    expect(await gqlData(admin.url, RESET, { key: 'overheard-1', quota: 'overheard' })).toEqual({
      resetKey: { reset: true, replicas: 1 },
    });
    // A limiter that starts replays the whole bucket to its watch.
    const second = await startLimiter(limiterEnv('limiter-2'));
    try {
      await waitUntil('the second limiter subscribed', async () => {
        // Ready serves requests; the bucket's replay (every entry's signature checked) may still
        // be under way: synced once it is in force.
        const ready = await readyz(second);
        return ready['status'] === 200 && ready['control'] === 'synced';
      });
      expect(await post(second.url, '/v1/decide', { key: 'overheard-1' })).toMatchObject({
        quota: 'overheard',
      });
    } finally {
      await second.stop();
    }
    await client.close();
    await eavesdropper.flush();

    // All it heard: the other backend's replies (the one gap of a user shared by backends).
    expect(heard.length).toBeGreaterThan(0);
    expect(heard.filter((subject) => !subject.startsWith('_INBOX.backend.'))).toEqual([]);
    expect(nats.violations().slice(violationsBefore)).toEqual([]);
  }, 120_000);
});

describe('a control bucket that JetStream replays under flow control, on the shipped users', () => {
  // JetStream asks a push consumer for flow control every couple of MB: a replay of a bigger
  // bucket stalls unless the user may answer it (nats.js answers on `$JS.FC.<stream>.>`).
  const ENTRIES = 48;
  const VALUE = 'x'.repeat(64 * 1024);
  let dir: string;
  let nats: ShippedNats;
  const opened: NatsConnection[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nats-flow-control-'));
    const secrets = generateSecrets();
    nats = await startShippedNats(dir, passwords(secrets));
    for (const [user, pass] of [
      ['admin', secrets.NATS_ADMIN_PASSWORD],
      ['limiter', secrets.NATS_LIMITER_PASSWORD],
    ] as const) {
      opened.push(await connect({ servers: nats.url, user, pass, inboxPrefix: INBOX_OF[user] }));
    }
  });

  afterAll(async () => {
    await Promise.all(opened.map((nc) => nc.close()));
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('replays every entry to a watch of the admin and of a limiter', async () => {
    const [adminNc, limiterNc] = opened as [NatsConnection, NatsConnection];
    // As the admin app creates it, then writes it.
    const kv = await adminNc
      .jetstream({ timeout: 5_000 })
      .views.kv(control.bucket, { history: 1, timeout: 5_000 });
    await Promise.all(
      Array.from({ length: ENTRIES }, (_, i) => kv.put(`quota.${i.toString(16)}`, VALUE)),
    );
    for (const nc of [adminNc, limiterNc]) {
      const watched = await nc
        .jetstream({ timeout: 5_000 })
        .views.kv(control.bucket, { bindOnly: true });
      const watch = await watched.watch({ key: '>' });
      let replayed = 0;
      const deadline = setTimeout(() => watch.stop(), 20_000);
      for await (const entry of watch) {
        replayed++;
        if (entry.delta === 0) break;
      }
      clearTimeout(deadline);
      watch.stop();
      expect(replayed).toBe(ENTRIES);
    }
    expect(nats.violations()).toEqual([]);
  }, 60_000);
});

describe('backends with NATS users of their own (nats-config --callers)', () => {
  const BACKENDS = ['billing', 'search'] as const;
  let dir: string;
  let secrets: Secrets;
  /** The backends' passwords, by variable (NATS_BILLING_PASSWORD, ...). */
  let backendPasswords: Record<string, string>;
  let nats: ShippedNats;
  let limiter: LimiterProcess;
  const opened: NatsConnection[] = [];
  /** A backend's connection, with the inbox prefix its user reads (or another). */
  const backend = async (name: string, inboxPrefix = callerInboxPrefix(name)) => {
    const pass = backendPasswords[callerPasswordVariable(name)]!;
    const nc = await connect({ servers: nats.url, user: name, pass, inboxPrefix });
    opened.push(nc);
    return nc;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nats-callers-'));
    secrets = generateSecrets();
    backendPasswords = Object.fromEntries(
      BACKENDS.map((name) => [callerPasswordVariable(name), natsPassword()]),
    );
    nats = await startShippedNats(
      dir,
      { ...passwords(secrets), ...backendPasswords },
      natsServerConfig({ callers: BACKENDS }),
    );
    limiter = await startLimiter({
      NATS_URL: nats.url,
      NATS_USER: 'limiter',
      NATS_PASSWORD: secrets.NATS_LIMITER_PASSWORD,
      CONTROL_PUBLIC_KEY: secrets.CONTROL_PUBLIC_KEY,
      REPORT_SEED: secrets.REPORT_SEED,
      DATA_DIR: join(dir, 'limiter'),
    });
    await waitUntil('limiter subscribed', async () => (await readyz(limiter))['status'] === 200);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(opened.map((nc) => nc.close()));
    await limiter?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves each through the SDK on its own inboxes, which no other user may read', async () => {
    const [billing, search] = [await backend('billing'), await backend('search')];
    const heard = overhear(search, `${callerInboxPrefix('search')}.>`);
    await search.flush();
    const client = new RateLimitClient({ connection: billing });
    expect(await client.acquire({ key: 'alice' })).toMatchObject({ allowed: true, code: 'OK' });
    await client.close();
    await search.flush();
    expect(heard).toEqual([]);

    for (const inbox of [`${callerInboxPrefix('billing')}.>`, '_INBOX.>']) {
      expect(await subscriptionOutcome(search, inbox)).toBe(subscribeViolation(inbox));
    }
    const caller = await connect({
      servers: nats.url,
      user: 'caller',
      pass: secrets.NATS_CALLER_PASSWORD,
    });
    opened.push(caller);
    expect(await subscriptionOutcome(caller, `${callerInboxPrefix('billing')}.>`)).toBe(
      subscribeViolation(`${callerInboxPrefix('billing')}.>`),
    );
  }, 60_000);

  it("gets no reply on nats.js's default inboxes, which its user may not read", async () => {
    const billing = await backend('billing', '_INBOX');
    expect(await refusal(natsAcquire(billing, subjects.acquire, { key: 'bob' }))).toMatch(
      /Permissions Violation for Subscription to "_INBOX\./,
    );
  }, 60_000);
});
