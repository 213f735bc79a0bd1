/**
 * Who is being limited now, end to end: two real limiter processes (one Redis, NATS) refuse keys
 * of a local and of a cluster quota, each reports its top refused keys in its signed stats
 * reports, and the admin's GraphQL `stats` shows them merged: counts summed per key over the two.
 */
import { controlNames } from '@app/contracts';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { gqlData, startAdmin, type AdminProcess } from './support/admin-process';
import { configFile, httpAcquire, sleep, waitReady } from './support/limiter-http';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';

jest.setTimeout(120_000);

const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const TOKEN = 'top-refused-admin';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const prefix = uniquePrefix();
const dir = mkdtempSync(join(tmpdir(), 'top-refused-'));
/** Unique per run: the cluster quota's counts live in the shared Redis. */
const run = randomUUID().slice(0, 8);
const LOCAL = `tr-local-${run}`;
const CLUSTER = `tr-cluster-${run}`;
/** One request per key in a window no test outlives: every further one is refused. */
const ONE_PER_HOUR = [
  { name: 'r', unit: 'requests', limit: 1, window: '1h', algorithm: 'fixed_window' },
];

interface Refused {
  key: string;
  count: number;
  error: number;
}
interface QuotaStats {
  quota: string;
  denied: number;
  topRefused: Refused[];
}

const STATS = '{ stats { replicas quotas { quota denied topRefused { key count error } } } }';

let admin: AdminProcess;
let limiters: LimiterProcess[] = [];
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connect({ servers: NATS_URL });
  const config = configFile(dir, [
    { name: LOCAL, limits: ONE_PER_HOUR },
    { name: CLUSTER, scope: 'cluster', limits: ONE_PER_HOUR },
  ]);
  const common = { NATS_URL, NATS_SUBJECT_PREFIX: prefix };
  const started = await Promise.allSettled([
    startAdmin({ ...common, DATA_DIR: join(dir, 'admin'), ADMIN_TOKEN: TOKEN }),
    ...[0, 1].map((i) =>
      startLimiter({
        ...common,
        REDIS_URL,
        REDIS_TIMEOUT_MS: '5000',
        CONFIG_FILE: config,
        DATA_DIR: join(dir, `limiter-${i}`),
      }),
    ),
  ]);
  const [a, ...ls] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  admin = a!;
  limiters = ls.filter((l) => l !== undefined);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  await Promise.all(limiters.map((l) => waitReady(l)));
});

afterAll(async () => {
  await Promise.all([admin?.stop(), ...limiters.map((l) => l.stop())]);
  const jsm = await nc.jetstreamManager();
  await jsm.streams.delete(`KV_${controlNames(prefix).bucket}`).catch(() => undefined);
  await nc.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends `times` acquires of `key` in `quota` to `limiter`; how many it refused (429). */
async function hammer(limiter: LimiterProcess, quota: string, key: string, times: number) {
  let refused = 0;
  for (let i = 0; i < times; i++) {
    const reply = await httpAcquire(limiter.url, { quota, key });
    if (reply['status'] === 429) refused++;
  }
  return refused;
}

/** `key:count` of the quota's merged list, most first. */
const shown = (q: QuotaStats | undefined): string[] =>
  (q?.topRefused ?? []).map((r) => `${r.key}:${r.count}`);

/**
 * Polls the admin's stats every 40 ms for 1.5 s until `quota`'s list is `expected`. Each report
 * holds the refusals since the previous one (500 ms): a burst that straddles a report of either
 * replica never shows whole, and the caller tries again with new keys.
 */
async function seen(quota: string, expected: string[]): Promise<QuotaStats | undefined> {
  const until = Date.now() + 1_500;
  let last: QuotaStats | undefined;
  while (Date.now() < until) {
    const data = await gqlData<{ stats: { quotas: QuotaStats[] } }>(admin.url, STATS, {}, AUTH);
    last = data.stats.quotas.find((q) => q.quota === quota);
    if (JSON.stringify(shown(last)) === JSON.stringify(expected)) return last;
    await sleep(40);
  }
  return undefined;
}

describe('top refused keys: two limiters, merged by the admin', () => {
  it('sums a local quota’s refusals of the same key on both replicas and keeps the order', async () => {
    const [a, b] = limiters as [LimiterProcess, LimiterProcess];
    const tries: string[][] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      const hot = `hot-${attempt}`;
      const mid = `mid-${attempt}`;
      const cold = `cold-${attempt}`;
      // Each replica admits each key once on its own (scope: local), and refuses the rest.
      const [hotA, midA, hotB, coldB] = await Promise.all([
        hammer(a, LOCAL, hot, 6),
        hammer(a, LOCAL, mid, 4),
        hammer(b, LOCAL, hot, 5),
        hammer(b, LOCAL, cold, 2),
      ]);
      expect([hotA, midA, hotB, coldB]).toEqual([5, 3, 4, 1]);
      const expected = [`${hot}:9`, `${mid}:3`, `${cold}:1`];
      const stats = await seen(LOCAL, expected);
      if (stats !== undefined) {
        expect(stats.topRefused.every((r) => r.error === 0)).toBe(true);
        return;
      }
      tries.push(expected);
    }
    throw new Error(`never seen whole: ${JSON.stringify(tries)}`);
  });

  it('sums a cluster quota’s refusals, decided in Redis, over the replicas', async () => {
    const [a, b] = limiters as [LimiterProcess, LimiterProcess];
    for (let attempt = 0; attempt < 4; attempt++) {
      const key = `shared-${attempt}`;
      // One admission for both replicas together: Redis decides.
      const [onA, onB] = await Promise.all([
        hammer(a, CLUSTER, key, 5),
        hammer(b, CLUSTER, key, 5),
      ]);
      expect(onA + onB).toBe(9);
      if ((await seen(CLUSTER, [`${key}:9`])) !== undefined) return;
    }
    throw new Error('the cluster quota’s refusals were never seen whole');
  });

  it('lists nothing for a quota that refused nothing lately', async () => {
    await sleep(1_200); // two report periods without refusals
    const data = await gqlData<{ stats: { replicas: number; quotas: QuotaStats[] } }>(
      admin.url,
      STATS,
      {},
      AUTH,
    );
    expect(data.stats.replicas).toBe(2);
    const local = data.stats.quotas.find((q) => q.quota === LOCAL);
    expect(local?.denied).toBeGreaterThan(0);
    expect(local?.topRefused).toEqual([]);
  });
});
