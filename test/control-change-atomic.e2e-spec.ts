/**
 * A change of many entries (an import) reaches the limiters whole or not at all (issue 11
 * point 9), with a real admin, real limiters and the shared NATS. The admin talks to NATS
 * through a TCP gate the test freezes after an exact number of bytes, so it is stopped in the
 * middle of publishing at the same point on every run, whatever the machine's speed, and is
 * then SIGKILLed. One limiter follows NATS through a gate the test cuts, so it misses the commit.
 */
import { controlNames, encodeEntry, type ControlQuota } from '@app/contracts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type KV, type NatsConnection } from 'nats';
import { gql, gqlData, startAdmin, type AdminProcess } from './support/admin-process';
import type { ControlBucket } from '../apps/admin/src/control/bucket-writes';
import { writeAsAdmin } from './support/control-keys';
import { post } from './support/limiter-http';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import { startTcpGate, type TcpGate } from './support/tcp-gate';

jest.setTimeout(600_000);

const NATS_PORT = 4222;
const NATS_URL = `nats://127.0.0.1:${NATS_PORT}`;
/** About 2 MB of entries: more than one NATS message (max_payload 1 MiB) can hold. */
const IMPORTED = 8_000;
/** Quotas in force before the import; the import changes their limit from 5 to 7. */
const PREVIOUS = 20;
/** The admin's bytes NATS receives once the import starts publishing: about a fifth of it. */
const PASSED_BEFORE_FREEZE = 400_000;

/** The second import changes the first this many of them (still more than max_payload). */
const CHANGED_AGAIN = 5_000;
/** A restarted admin reads 8 000 quotas and finishes a change while limiters load them too. */
const ADMIN_START_MS = 120_000;
/** A limiter that starts reads the 8 000 entries of the bucket before it says `synced`. */
const LIMITER_SYNC_MS = 120_000;

const IMPORT = 'mutation I($d: String!) { importConfig(document: $d, format: yaml) { quotas } }';

function importDocument(limit: number, count: number, withPrevious: boolean): string {
  const lines = ['quotas:'];
  const quota = (name: string, value: number): void => {
    lines.push(
      `  - name: ${name}`,
      `    match: "${name}-*"`,
      `    limits: [{ name: rpm, limit: ${value}, window: 1m }]`,
    );
  };
  // The previous quotas first: a publisher that writes in document order changes them first.
  if (withPrevious) for (let i = 0; i < PREVIOUS; i++) quota(`prev-${i}`, 7);
  for (let i = 0; i < count; i++) quota(`imp-${i}`, limit);
  return lines.join('\n');
}

/** Imported quotas checked one by one: the first ones published, some further, the last. */
const SAMPLE = [
  ...Array.from({ length: 50 }, (_, i) => i),
  ...Array.from({ length: 19 }, (_, i) => ((i + 1) * IMPORTED) / 20),
  IMPORTED - 1,
];

/** The quota's limit on the limiter; undefined when it does not serve that quota. */
async function limitOf(limiter: LimiterProcess, quota: string): Promise<unknown> {
  const reply = await post(limiter.url, '/v1/decide', { key: 'probe', quota });
  return reply['code'] === 'UNKNOWN_QUOTA' ? undefined : reply['limit'];
}

/** Quotas in force on the limiter (its /metrics gauge). */
async function quotasInForce(limiter: LimiterProcess): Promise<number> {
  const text = await (await fetch(`${limiter.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('ratelimit_quotas '));
  return Number(line?.slice('ratelimit_quotas '.length));
}

async function controlState(limiter: LimiterProcess): Promise<unknown> {
  return ((await (await fetch(`${limiter.url}/readyz`)).json()) as Record<string, unknown>)[
    'control'
  ];
}

/** What a limiter serves: the number of quotas, the previous ones' limits, the samples'. */
async function served(limiter: LimiterProcess): Promise<{
  count: number;
  previous: unknown[];
  imported: unknown[];
}> {
  const previous: unknown[] = [];
  for (let i = 0; i < PREVIOUS; i++) previous.push(await limitOf(limiter, `prev-${i}`));
  const imported: unknown[] = [];
  for (const i of SAMPLE) imported.push(await limitOf(limiter, `imp-${i}`));
  return { count: await quotasInForce(limiter), previous, imported };
}

const sentinel = (name: string): ControlQuota => ({
  spec: {
    name,
    limits: [
      { name: 'rpm', unit: 'requests', limit: 3, windowMs: 60_000, algorithm: 'fixed_window' },
    ],
  },
  version: 1,
  updatedAt: Date.now(),
});

describe('a change of many entries is served whole or not at all', () => {
  const prefix = uniquePrefix();
  const bucket = controlNames(prefix).bucket;
  const root = mkdtempSync(join(tmpdir(), 'control-change-'));
  const limiters: LimiterProcess[] = [];
  let adminGate: TcpGate;
  let limiterGate: TcpGate;
  let admin: AdminProcess | undefined;
  let nc: NatsConnection;
  let kv: KV;
  /** The bucket written as the admin writes it (signed with its key). */
  let asAdmin: ControlBucket;
  /** Quotas in force on a limiter before the import (config, providers, the previous ones). */
  let baseline = 0;

  const env = (dir: string, natsPort = NATS_PORT): Record<string, string> => ({
    NATS_URL: `nats://127.0.0.1:${natsPort}`,
    NATS_SUBJECT_PREFIX: prefix,
    DATA_DIR: join(root, dir),
    LOG_LEVEL: 'warn',
  });
  const startAdminBehindGate = async (): Promise<AdminProcess> =>
    (admin = await startAdmin(env('admin', adminGate.port), ADMIN_START_MS));
  const startOne = async (name: string, natsPort?: number): Promise<LimiterProcess> => {
    const limiter = await startLimiter(env(name, natsPort));
    limiters.push(limiter);
    // It replays the bucket, up to 8 000 entries, each signature checked: long on a busy host.
    await waitUntil(
      `${name} synced`,
      async () => (await controlState(limiter)) === 'synced',
      LIMITER_SYNC_MS,
    );
    return limiter;
  };

  /** Puts a quota in the bucket directly; once a limiter serves it, it has read all before it. */
  async function everythingRead(name: string, among: readonly LimiterProcess[]): Promise<void> {
    const { key, value } = encodeEntry({ kind: 'quota', quota: sentinel(name) });
    await asAdmin.put(key, value);
    for (const limiter of among) {
      await waitUntil(`${name} served`, async () => (await limitOf(limiter, name)) === 3);
    }
  }

  /** Waits for the bucket to hold no change traces; names what the admin said if it does not. */
  async function settled(): Promise<void> {
    await waitUntil(
      'the bucket settled',
      async () => (await changeKeys(kv)).length === 0,
      120_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the admin said:\n${admin?.output().slice(-4000)}`);
    });
  }

  /** Sends the import and SIGKILLs the admin once the gate froze its publishing. */
  async function killedDuringImport(document: string): Promise<void> {
    const answer = gql(admin!.url, IMPORT, { d: document }).catch(() => undefined);
    await waitUntil('the admin frozen mid-publish', () => adminGate.frozen, 300_000);
    await admin!.stop('SIGKILL');
    admin = undefined;
    await answer;
    adminGate.open();
  }

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    adminGate = await startTcpGate(NATS_PORT);
    limiterGate = await startTcpGate(NATS_PORT);
  });

  afterAll(async () => {
    await admin?.stop('SIGKILL');
    for (const limiter of limiters) await limiter.stop('SIGKILL');
    await adminGate?.close();
    await limiterGate?.close();
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(`KV_${bucket}`).catch(() => undefined);
    await nc.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('an admin killed in the middle of an 8 000-quota import: the previous set stays, then all of it', async () => {
    await startAdminBehindGate();
    const [a, b] = [await startOne('a'), await startOne('b')];
    const previous = ['quotas:'];
    for (let i = 0; i < PREVIOUS; i++) {
      previous.push(
        `  - { name: prev-${i}, match: "prev-${i}-*", limits: [{ name: rpm, limit: 5, window: 1m }] }`,
      );
    }
    await gqlData(admin!.url, IMPORT, { d: previous.join('\n') });
    for (const limiter of [a, b]) {
      await waitUntil(
        'previous set',
        async () => (await limitOf(limiter, `prev-${PREVIOUS - 1}`)) === 5,
      );
    }
    kv = await nc.jetstream().views.kv(bucket, { bindOnly: true });
    asAdmin = writeAsAdmin(nc, kv, bucket);
    baseline = await quotasInForce(a);
    const before = await served(a);
    expect(before.previous).toEqual(Array(PREVIOUS).fill(5));
    expect(before.imported).toEqual(Array(SAMPLE.length).fill(undefined));

    adminGate.freezeAfter(PASSED_BEFORE_FREEZE);
    await killedDuringImport(importDocument(10, IMPORTED, true));
    // Part of the import is in the bucket; whatever of it the limiters act on, they have read.
    await everythingRead('sentinel-1', [a, b]);

    const previousSet = {
      count: baseline + 1,
      previous: before.previous,
      imported: before.imported,
    };
    for (const limiter of [a, b]) expect(await served(limiter)).toEqual(previousSet);
    // A limiter that starts now replays the half-published bucket: the previous set, too.
    const c = await startOne('c');
    expect(await served(c)).toEqual(previousSet);

    // The restarted admin reconciles the bucket with its store, which holds the whole import.
    await startAdminBehindGate();
    const all = {
      count: baseline + IMPORTED,
      previous: Array(PREVIOUS).fill(7),
      imported: Array(SAMPLE.length).fill(10),
    };
    for (const limiter of [a, b, c]) {
      await waitUntil(
        'all of the import',
        async () => (await quotasInForce(limiter)) === all.count,
        120_000,
      );
      expect(await served(limiter)).toEqual(all);
    }
    await settled();
    expect(await limitOf(a, 'sentinel-1')).toBeUndefined();
    // The next test needs fewer limiters: the machine has two cores.
    await Promise.all([b.stop(), c.stop()]);
  });

  it('an admin killed after the commit: every limiter serves all of it, one that missed the commit too', async () => {
    const a = limiters[0]!;
    // This limiter follows NATS through a gate, cut before the import and opened after it.
    const late = await startOne('late', limiterGate.port);
    for (const limiter of [a, late]) expect(await limitOf(limiter, 'imp-0')).toBe(10);
    limiterGate.cut();
    await waitUntil('late disconnected', async () => (await controlState(late)) !== 'synced');

    // The commit passes, then a few of the settle's writes.
    adminGate.freezeAfterText(`$KV.${bucket}.change.commit`, 20_000);
    await killedDuringImport(importDocument(11, CHANGED_AGAIN, false));
    await everythingRead('sentinel-2', [a]);
    expect((await kv.get('change.commit'))?.operation).toBe('PUT');

    const all = {
      count: baseline + IMPORTED + 1,
      previous: Array(PREVIOUS).fill(7),
      imported: SAMPLE.map((i) => (i < CHANGED_AGAIN ? 11 : 10)),
    };
    expect(all.imported).toContain(10);
    expect(await served(a)).toEqual(all);
    const fresh = await startOne('fresh');
    expect(await served(fresh)).toEqual(all);
    limiterGate.open();
    await waitUntil(
      'late synced again',
      async () => (await controlState(late)) === 'synced',
      60_000,
    );
    expect(await served(late)).toEqual(all);

    await startAdminBehindGate();
    await settled();
    // The restarted admin's reconcile deletes the sentinel, which its store never held; on a
    // loaded machine its JetStream calls may time out and be retried, so wait for the state
    // itself, then for each limiter to act on it.
    const sentinelKey = encodeEntry({ kind: 'quota', quota: sentinel('sentinel-2') }).key;
    await waitUntil(
      'sentinel-2 deleted from the bucket by the admin',
      async () => (await kv.get(sentinelKey))?.operation !== 'PUT',
      120_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the admin said:\n${admin?.output().slice(-4000)}`);
    });
    for (const limiter of [a, fresh, late]) {
      await waitUntil(
        'sentinel-2 removed',
        async () => (await limitOf(limiter, 'sentinel-2')) === undefined,
        120_000,
      );
      expect(await served(limiter)).toEqual({ ...all, count: baseline + IMPORTED });
    }
  });
});

/**
 * Keys of the change protocol still in the bucket (parts, commit). Filtered by the server: the
 * TCP gates run in this process, which must not be kept busy listing 8 000 keys.
 */
async function changeKeys(kv: KV): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of await kv.keys('change.>')) keys.push(key);
  return keys;
}
