/**
 * Zero trust on the bus (issue 25 point 1): only the admin changes quotas and resets keys, and
 * only limiters report stats. A real admin and a real limiter on the shared NATS, started with
 * the test's control keys (support/control-keys.ts); the attacker is a plain nats.js client
 * without a key. Before signing, the first three cases failed: the forged quota was in force
 * (limit 1 000 000), the reset answered `true`, and the admin counted the phantom replica.
 */
import { controlNames, quotaEntryKey, SIGNATURE_TAG } from '@app/contracts';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, headers, type KV, type NatsConnection } from 'nats';
import { gqlData, startAdmin, type AdminProcess } from './support/admin-process';
import { httpAcquire, post, sleep } from './support/limiter-http';
import { CONTROL_KEYS_ENV, NO_CONTROL_KEYS_ENV } from './support/control-keys';
import { forgedQuota } from './support/forged-control';
import {
  runAppToExit,
  startLimiter,
  uniquePrefix,
  type LimiterProcess,
} from './support/limiter-process';
import { waitUntil } from './support/nats-process';

jest.setTimeout(180_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const UPSERT = 'mutation U($input: QuotaInput!) { upsertQuota(input: $input) { version } }';
const QUEUE_GROUP = `q-${randomUUID()}`;

interface AuditRow {
  actor: string;
  action: string;
  target: string;
  before: string | null;
  after: string | null;
}

describe('signed control: what a plain NATS client cannot do', () => {
  const prefix = uniquePrefix();
  const names = controlNames(prefix);
  const root = mkdtempSync(join(tmpdir(), 'control-signing-'));
  let admin: AdminProcess;
  let limiter: LimiterProcess;
  let nc: NatsConnection;
  let kv: KV;

  const env = (dir: string): Record<string, string> => ({
    NATS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    NATS_QUEUE_GROUP: QUEUE_GROUP,
    DATA_DIR: join(root, dir),
  });
  const limitOf = async (quota: string): Promise<unknown> =>
    (await post(limiter.url, '/v1/decide', { key: `${quota}-probe`, quota }))['limit'];
  const upsert = (name: string, limit: number): Promise<unknown> =>
    gqlData(admin.url, UPSERT, {
      input: { name, match: `${name}-*`, limits: [{ name: 'rpm', limit, windowMs: 60_000 }] },
    });
  const inForce = (quota: string, limit: number): Promise<void> =>
    waitUntil(`${quota} at ${limit}`, async () => (await limitOf(quota)) === limit, 30_000);
  const refused = async (kind: string, cause: string): Promise<number> => {
    const metrics = await (await fetch(`${limiter.url}/metrics`)).text();
    const series = `ratelimit_control_refused_total{kind="${kind}",cause="${cause}"} `;
    const line = metrics.split('\n').find((l) => l.startsWith(series));
    return line === undefined ? 0 : Number(line.slice(series.length));
  };
  const audits = async (): Promise<AuditRow[]> =>
    (
      await gqlData<{ auditLog: AuditRow[] }>(
        admin.url,
        '{ auditLog(limit: 50) { actor action target before after } }',
      )
    ).auditLog.filter((row) => row.actor === 'system');

  /**
   * The limits `quota` had on the limiter while `attack` ran and until a change the admin made
   * after it was in force (so the limiter has read the attack), then half a second more.
   */
  async function limitsDuring(quota: string, attack: () => Promise<void>): Promise<unknown[]> {
    const seen = new Set<unknown>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        seen.add(await limitOf(quota));
        await sleep(10);
      }
    })();
    await attack();
    const sentinel = `after-${randomUUID().slice(0, 8)}`;
    await upsert(sentinel, 3);
    await inForce(sentinel, 3);
    await sleep(500);
    sampling = false;
    await sampler;
    return [...seen];
  }

  /** The admin's value is back under `key`: signed by it, with `limit`. */
  async function restored(key: string, limit: number): Promise<void> {
    await waitUntil(
      `${key} restored`,
      async () => {
        const entry = await kv.get(key);
        const text = entry?.operation === 'PUT' ? entry.string() : '';
        return text.startsWith(`${SIGNATURE_TAG} `) && text.includes(`"limit":${limit},`);
      },
      10_000,
    );
  }

  beforeAll(async () => {
    [admin, limiter] = await Promise.all([startAdmin(env('admin')), startLimiter(env('limiter'))]);
    nc = await connect({ servers: NATS_URL });
    await upsert('api', 5);
    await inForce('api', 5);
    kv = await nc.jetstream().views.kv(names.bucket, { bindOnly: true });
  });

  afterAll(async () => {
    await Promise.all([admin?.stop(), limiter?.stop()]);
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(`KV_${names.bucket}`).catch(() => undefined);
    await nc.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a quota put into the bucket by a plain client is never in force; the admin puts its own back', async () => {
    const before = await refused('entry', 'unsigned');
    const limits = await limitsDuring('api', async () => {
      await kv.put(quotaEntryKey('api'), JSON.stringify(forgedQuota('api')));
    });
    expect(limits).toEqual([5]);
    expect(await refused('entry', 'unsigned')).toBeGreaterThan(before);
    await restored(quotaEntryKey('api'), 5);
    await waitUntil('the restore audited', async () => (await audits()).length > 0, 10_000);
    const [audit] = await audits();
    expect(audit).toMatchObject({
      actor: 'system',
      action: 'restoreControl',
      target: names.bucket,
    });
    expect(JSON.parse(audit!.before!)).toMatchObject({
      found: [{ key: quotaEntryKey('api'), refusal: 'unsigned' }],
    });
    expect(limiter.output()).toContain('control entry refused');
  });

  it('a delete by a plain client removes nothing; the admin puts the entry back', async () => {
    const limits = await limitsDuring('api', async () => {
      await kv.delete(quotaEntryKey('api'));
      await kv.purge(quotaEntryKey('api'));
    });
    expect(limits).toEqual([5]);
    await restored(quotaEntryKey('api'), 5);
  });

  it('an old signed entry put back rolls nothing back, also after a delete and a new quota', async () => {
    const v1 = (await kv.get(quotaEntryKey('api')))!.value;
    await upsert('api', 7);
    await inForce('api', 7);
    const before = await refused('entry', 'replayed');
    expect(
      await limitsDuring('api', async () => {
        await kv.put(quotaEntryKey('api'), v1);
      }),
    ).toEqual([7]);
    expect(await refused('entry', 'replayed')).toBeGreaterThan(before);
    await restored(quotaEntryKey('api'), 7);

    // Deleted, then created again: its version starts at 1 again, the sequence does not.
    await upsert('cycle', 3);
    await inForce('cycle', 3);
    const old = (await kv.get(quotaEntryKey('cycle')))!.value;
    await gqlData(admin.url, 'mutation { deleteQuota(name: "cycle") }');
    await waitUntil('cycle deleted', async () => (await limitOf('cycle')) !== 3, 30_000);
    await upsert('cycle', 4);
    await inForce('cycle', 4);
    expect(
      await limitsDuring('cycle', async () => {
        await kv.put(quotaEntryKey('cycle'), old);
      }),
    ).toEqual([4]);
  });

  it('a reset request from a plain client is refused; the admin resets', async () => {
    const key = `api-reset-${randomUUID()}`;
    const used = async (): Promise<number | undefined> =>
      (
        (await (await fetch(`${limiter.url}/v1/stats/${key}?quota=api`)).json()) as {
          limits: { used: number }[];
        }
      ).limits[0]?.used;
    for (let i = 0; i < 3; i++) {
      expect((await httpAcquire(limiter.url, { key, quota: 'api' }))['status']).toBe(200);
    }
    const answer = await nc.request(names.resetKey, JSON.stringify({ key, quota: 'api' }), {
      timeout: 5_000,
    });
    expect(answer.json<Record<string, unknown>>()).toMatchObject({
      code: 'INVALID_REQUEST',
      reason: expect.stringMatching(/^signature: not signed/),
    });
    expect(answer.json<Record<string, unknown>>()['value']).toBeUndefined();
    expect(await used()).toBe(3);
    expect(await refused('request', 'unsigned')).toBeGreaterThan(0);

    const reset = await gqlData<{ resetKey: { reset: boolean } }>(
      admin.url,
      `mutation { resetKey(key: "${key}", quota: "api") { reset } }`,
    );
    expect(reset.resetKey.reset).toBe(true);
    expect(await used()).toBe(0);
  });

  it('a stats report from a plain client counts no replica, on the admin or the limiter', async () => {
    const h = headers();
    h.set('Ratelimit-Replica', 'phantom');
    h.set('Ratelimit-Queue-Group', QUEUE_GROUP);
    const phantom = {
      replica: 'phantom',
      at: Date.now(),
      quotas: [{ quota: 'api', approved: 1_000, denied: 0, queued: 0, activeKeys: 1 }],
    };
    const replicas = new Set<unknown>();
    const groupSizes = new Set<unknown>();
    for (let i = 0; i < 8; i++) {
      nc.publish(names.statsReport, JSON.stringify(phantom), { headers: h });
      await sleep(250);
      const stats = await gqlData<{ stats: { replicas: number } }>(
        admin.url,
        '{ stats { replicas } }',
      );
      replicas.add(stats.stats.replicas);
      const metrics = await (await fetch(`${limiter.url}/metrics`)).text();
      groupSizes.add(/^ratelimit_queue_group_replicas (\d+)/m.exec(metrics)?.[1]);
    }
    expect([...replicas]).toEqual([1]);
    expect([...groupSizes]).toEqual(['1']);
    expect(await refused('report', 'unsigned')).toBeGreaterThan(0);
    expect(admin.output()).toContain('stats report refused');
  });
});

describe('control keys at start', () => {
  it('a malformed key stops either app at start, naming the variable and never a seed', async () => {
    const [limiter, admin] = await Promise.all([
      runAppToExit('limiter', { CONTROL_PUBLIC_KEY: 'UNOTAKEY', NATS_URL: '' }),
      runAppToExit('admin', {
        CONTROL_SEED: CONTROL_KEYS_ENV['CONTROL_PUBLIC_KEY']!,
        NATS_URL: '',
      }),
    ]);
    expect(limiter.code).toBe(1);
    expect(limiter.output).toMatch(
      /CONTROL_PUBLIC_KEY: .*UNOTAKEY.* is not a valid nkeys public key/,
    );
    expect(admin.code).toBe(1);
    expect(admin.output).toContain('CONTROL_SEED must be an nkeys seed');
    for (const { output } of [limiter, admin]) {
      expect(output).not.toContain(CONTROL_KEYS_ENV['REPORT_SEED']!);
    }
  });

  it('without keys: one warning at start, and control is taken as it comes (as before)', async () => {
    const prefix = uniquePrefix();
    const bucket = controlNames(prefix).bucket;
    const root = mkdtempSync(join(tmpdir(), 'control-unsigned-'));
    const nc = await connect({ servers: NATS_URL });
    const limiter = await startLimiter({
      ...NO_CONTROL_KEYS_ENV,
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      DATA_DIR: root,
    });
    try {
      const kv = await nc.jetstream().views.kv(bucket, { history: 1 });
      await kv.put(quotaEntryKey('open'), JSON.stringify(forgedQuota('open')));
      await waitUntil('the unsigned entry in force', async () => {
        const reply = await post(limiter.url, '/v1/decide', { key: 'open-1', quota: 'open' });
        return reply['limit'] === 1_000_000;
      });
      const warnings = limiter.output().match(/control is unauthenticated/g) ?? [];
      expect(warnings).toHaveLength(1);
    } finally {
      await limiter.stop();
      await (await nc.jetstreamManager()).streams.delete(`KV_${bucket}`).catch(() => undefined);
      await nc.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
