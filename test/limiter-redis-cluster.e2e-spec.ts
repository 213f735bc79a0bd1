/**
 * Cluster scope on a real Redis Cluster: a private 3-master cluster, two limiter processes with
 * REDIS_CLUSTER=true, one quota with a fixed window, a sliding window and a token bucket over 200
 * keys (so the keys spread over every master's slots), concurrent acquires over HTTP to both.
 * Then REDIS_CLUSTER set wrongly either way: the limiter says what is wrong, once.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { configFile, httpAcquire, metric, sleep, waitReady } from './support/limiter-http';
import { startLimiter, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import { privateRedisCluster, type RedisClusterProcess } from './support/redis-cluster';
import { privateRedis, type RedisProcess } from './support/redis-process';

jest.setTimeout(120_000);

const KEYS = 200;
const PER_KEY = 12;
const DAY_MS = 86_400_000;

/** Starts every limiter; the ones that did start are kept for afterAll even if another failed. */
async function startAll(into: LimiterProcess[], envs: Record<string, string>[]): Promise<void> {
  const started = await Promise.allSettled(envs.map((env) => startLimiter(env)));
  for (const s of started) if (s.status === 'fulfilled') into.push(s.value);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/** Stops everything, also after a failed start; a limiter that fails to stop reports null. */
async function cleanUp(
  limiters: readonly LimiterProcess[],
  cluster: RedisClusterProcess | RedisProcess | undefined,
  client: Cluster | undefined,
  dir: string,
): Promise<(number | null)[]> {
  try {
    const codes = await Promise.all(limiters.map((l) => l.stop().catch(() => null)));
    client?.disconnect();
    return codes;
  } finally {
    await (cluster !== undefined && 'stop' in cluster ? cluster.stop() : cluster?.kill());
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('cluster scope on a 3-master Redis Cluster (REDIS_CLUSTER=true)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-e2e-'));
  const quota = `mixed-${randomUUID()}`;
  const limiters: LimiterProcess[] = [];
  let cluster: RedisClusterProcess | undefined;
  let client: Cluster | undefined;

  beforeAll(async () => {
    cluster = await privateRedisCluster(3);
    const config = configFile(dir, [
      {
        name: quota,
        scope: 'cluster',
        // A Redis failure answers UNAVAILABLE, which the test refuses: a local fallback would
        // hide it behind plausible answers.
        onStoreFailure: 'closed',
        limits: [
          { name: 'fw', unit: 'requests', limit: 8, window: '1d', algorithm: 'fixed_window' },
          { name: 'sw', unit: 'tokens', limit: 60, window: '1d', algorithm: 'sliding_window' },
          { name: 'tb', unit: 'credits', limit: 5, window: '1d', algorithm: 'token_bucket' },
        ],
      },
    ]);
    await startAll(
      limiters,
      [0, 1].map((i) => ({
        NATS_URL: '',
        REDIS_CLUSTER: 'true',
        REDIS_URLS: cluster!.urls.join(','),
        // Exactness, not latency, is checked here: 2400 calls at once on a busy 2-core machine
        // can outlast the default 500 ms, and `closed` would then answer 503.
        REDIS_TIMEOUT_MS: '5000',
        CONFIG_FILE: config,
        DATA_DIR: join(dir, `data-${i}`),
      })),
    );
    await Promise.all(limiters.map((l) => waitReady(l)));
    client = new Cluster(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
    client.on('error', () => undefined);
  });

  afterAll(async () => {
    const codes = await cleanUp(limiters, cluster, client, dir);
    expect(codes).toEqual([0, 0]);
  });

  it(`${KEYS} keys x ${PER_KEY} concurrent acquires over two limiters admit exactly the binding limit per key`, async () => {
    // The fixed window is a UTC day: start well clear of its turn so it cannot reset mid-test.
    const toTurn = DAY_MS - (Date.now() % DAY_MS);
    if (toTurn < 60_000) await sleep(toTurn + 1_000);
    // Each third of the keys is bound by another limit (and so another algorithm).
    const groups = [
      { cost: { requests: 1 }, admits: 8, limitName: 'fw' },
      { cost: { requests: 1, tokens: 10 }, admits: 6, limitName: 'sw' },
      { cost: { requests: 1, credits: 1 }, admits: 5, limitName: 'tb' },
    ];
    const keys = Array.from({ length: KEYS }, (_, i) => `k${i}-${randomUUID()}`);
    const started = performance.now();
    const replies = await Promise.all(
      keys.map((key, k) =>
        Promise.all(
          Array.from({ length: PER_KEY }, (_, i) =>
            httpAcquire(limiters[i % 2]!.url, { key, quota, cost: groups[k % 3]!.cost }),
          ),
        ),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(`${KEYS * PER_KEY} acquires over HTTP in ${seconds.toFixed(2)} s`);

    const all = replies.flat();
    // Nothing was answered by a failure policy or an error.
    expect(all.filter((r) => r['status'] !== 200 && r['status'] !== 429)).toEqual([]);
    expect(new Set(all.map((r) => r['code']))).toEqual(new Set(['OK', 'RATE_LIMITED']));
    for (const [k, perKey] of replies.entries()) {
      const group = groups[k % 3]!;
      const admitted = perKey.filter((r) => r['allowed'] === true);
      const refused = perKey.filter((r) => r['allowed'] === false);
      expect([keys[k], admitted.length]).toEqual([keys[k], group.admits]);
      expect(refused.every((r) => r['status'] === 429 && r['limitName'] === group.limitName)).toBe(
        true,
      );
    }
    for (const l of limiters) {
      expect(await metric(l, 'ratelimit_store_failures_total')).toBe(0);
      expect(await metric(l, 'ratelimit_store_degraded')).toBe(0);
    }
  });

  it('the state keys are spread over all three masters, one per key, reachable through the cluster', async () => {
    // The client learns the masters from its first slots refresh, which may have timed out while
    // the test above kept this process busy; it retries on its own: wait until it knows them.
    await waitUntil('the cluster client knows the masters', () => client!.status === 'ready');
    const masters = client!.nodes('master');
    expect(masters).toHaveLength(3);
    const perMaster = await Promise.all(masters.map((m) => m.keys(`*${quota}*`)));
    const counts = perMaster.map((names) => names.length);
    console.log(`state keys per master: ${counts.join(', ')}`);
    // 200 keys over 16384 slots split in three: each master gets ~67; all on one would fail here.
    for (const n of counts) expect(n).toBeGreaterThan(20);
    const names = perMaster.flat();
    expect(names).toHaveLength(KEYS);
    expect(new Set(names).size).toBe(KEYS);
    // Routed by slot through the cluster client, every key is found where the cluster says.
    const found = await Promise.all(names.map((n) => client!.exists(n)));
    expect(found.every((f) => f === 1)).toBe(true);
  });
});

describe('a Redis Cluster node given without REDIS_CLUSTER', () => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-moved-'));
  const quota = `plain-${randomUUID()}`;
  const limiters: LimiterProcess[] = [];
  let cluster: RedisClusterProcess | undefined;

  beforeAll(async () => {
    cluster = await privateRedisCluster(3);
    const config = configFile(dir, [
      {
        name: quota,
        scope: 'cluster',
        onStoreFailure: 'closed',
        limits: [
          { name: 'r', unit: 'requests', limit: 5, window: '1d', algorithm: 'fixed_window' },
        ],
      },
    ]);
    await startAll(limiters, [
      {
        NATS_URL: '',
        REDIS_URL: cluster.urls[0]!,
        CONFIG_FILE: config,
        DATA_DIR: join(dir, 'data'),
      },
    ]);
    await waitReady(limiters[0]!);
  });

  afterAll(async () => {
    const codes = await cleanUp(limiters, cluster, undefined, dir);
    expect(codes).toEqual([0]);
  });

  it('fails the keys of other nodes by the policy and logs once that REDIS_CLUSTER=true is needed', async () => {
    const limiter = limiters[0]!;
    // One at a time: requests of one quota that arrive in the same event-loop turn share one
    // script call, which a cluster node refuses whole (CROSSSLOT) when their keys hash to
    // different slots, so sent together they could all be refused.
    const codes: unknown[] = [];
    for (let i = 0; i < 30; i++) {
      codes.push((await httpAcquire(limiter.url, { key: `m${i}`, quota }))['code']);
    }
    // Keys of the given node's slots work; the others are answered by onStoreFailure: closed.
    expect(codes).toContain('OK');
    expect(codes).toContain('UNAVAILABLE');
    expect(new Set(codes)).toEqual(new Set(['OK', 'UNAVAILABLE']));
    // The hint is logged before the refusal it explains, but reaches this process on another
    // pipe than the reply: wait until it is read.
    const hint = /points at a Redis Cluster node.*REDIS_CLUSTER=true/g;
    await waitUntil('the REDIS_CLUSTER hint logged', () => limiter.output().match(hint) !== null);
    const hints = limiter.output().match(hint);
    expect(hints).toHaveLength(1);
  });
});

describe('REDIS_CLUSTER=true given a standalone Redis', () => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-standalone-'));
  const quota = `plain-${randomUUID()}`;
  const limiters: LimiterProcess[] = [];
  let redis: RedisProcess | undefined;

  beforeAll(async () => {
    redis = await privateRedis();
    const config = configFile(dir, [
      {
        name: quota,
        scope: 'cluster',
        onStoreFailure: 'closed',
        limits: [
          { name: 'r', unit: 'requests', limit: 5, window: '1d', algorithm: 'fixed_window' },
        ],
      },
    ]);
    await startAll(limiters, [
      {
        NATS_URL: '',
        REDIS_CLUSTER: 'true',
        REDIS_URL: redis.url,
        CONFIG_FILE: config,
        DATA_DIR: join(dir, 'data'),
      },
    ]);
  });

  afterAll(async () => {
    const codes = await cleanUp(limiters, redis, undefined, dir);
    expect(codes).toEqual([0]);
  });

  it('stays degraded, answers by the policy and logs once that the server is not a cluster node', async () => {
    const limiter = limiters[0]!;
    await waitReady(limiter, 'degraded');
    expect(await httpAcquire(limiter.url, { key: 'k', quota })).toMatchObject({
      status: 503,
      code: 'UNAVAILABLE',
    });
    // The client retries every second; the message must still be there only once.
    await sleep(1_500);
    const hints = limiter.output().match(/REDIS_CLUSTER=true but .* is not a Redis Cluster node/g);
    expect(hints).toHaveLength(1);
  });
});
