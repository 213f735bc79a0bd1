/**
 * A hung master of a Redis Cluster (REDIS_CLUSTER=true): only the keys of its slots are answered by
 * onStoreFailure, within REDIS_TIMEOUT_MS; its circuit alone opens (the other masters keep
 * deciding exactly), then answers its keys at once, and closes once the master is resumed.
 * The stop stays well under cluster-node-timeout (15 s), after which the cluster itself would fail.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { RedisQuotaStore } from '../apps/limiter/src/cluster/redis-quota-store';
import { configFile, httpAcquire, sleep, waitReady, type Json } from './support/limiter-http';
import { startLimiter, type LimiterProcess } from './support/limiter-process';
import { privateRedisCluster, type RedisClusterProcess } from './support/redis-cluster';
import {
  HANG_BOUND_MS,
  OPEN_BOUND_MS,
  TIMEOUT_MS,
  readyz as readyzOf,
  timedAcquire,
  type Timed,
} from './support/store-outage';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(120_000);

const LIMIT = 5;
const PER_SIDE = 8;

describe('a hung master of a Redis Cluster: its circuit alone opens', () => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-circuit-'));
  const quota = `hang-${randomUUID().slice(0, 8)}`;
  let cluster: RedisClusterProcess;
  let client: Cluster;
  let limiter: LimiterProcess | undefined;

  beforeAll(async () => {
    cluster = await privateRedisCluster(3);
    const config = configFile(dir, [
      {
        name: quota,
        scope: 'cluster',
        onStoreFailure: 'closed',
        limits: [{ name: 'r', unit: 'requests', limit: LIMIT, window: '1h' }],
      },
    ]);
    limiter = await startLimiter({
      NATS_URL: '',
      REDIS_CLUSTER: 'true',
      REDIS_URLS: cluster.urls.join(','),
      REDIS_TIMEOUT_MS: String(TIMEOUT_MS),
      CONFIG_FILE: config,
      DATA_DIR: join(dir, 'data'),
    });
    await waitReady(limiter);
    client = new Cluster(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
    client.on('error', () => undefined);
    await client.ping();
  });

  afterAll(async () => {
    for (const port of cluster.ports) cluster.signal(port, 'SIGCONT');
    expect(await limiter?.stop()).toBe(0);
    client.disconnect();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The master (`host:port`) of a (quota, key)'s slot, from the cluster's own slot map. */
  const masterOf = (key: string): string | undefined =>
    client.slots[calculateSlot(RedisQuotaStore.stateKey(quota, key))]?.[0];

  /** PER_SIDE fresh keys on `node` and as many on the other masters. */
  function keysAround(node: string, label: string): { on: string[]; off: string[] } {
    const on: string[] = [];
    const off: string[] = [];
    for (let i = 0; on.length < PER_SIDE || off.length < PER_SIDE; i++) {
      const key = `${label}-${i}-${randomUUID().slice(0, 8)}`;
      const side = masterOf(key) === node ? on : off;
      if (side.length < PER_SIDE) side.push(key);
    }
    return { on, off };
  }

  const timed = (key: string): Promise<Timed> => timedAcquire(limiter!.url, { key, quota });
  const readyz = (): Promise<Json> => readyzOf(limiter!);

  it('answers the hung master’s keys by the policy within REDIS_TIMEOUT_MS, opens its circuit alone, and closes it on SIGCONT', async () => {
    await awayFromWindowEnd(3_600_000, 60_000);
    const port = cluster.ports[0]!;
    const node = `127.0.0.1:${port}`;
    const hang = keysAround(node, 'hang');
    const open = keysAround(node, 'open');
    const back = keysAround(node, 'back');

    cluster.signal(port, 'SIGSTOP');
    let during: Timed[];
    let whileOpen: Timed[];
    let circuits: unknown;
    try {
      // Two waves 50 ms apart, as in limiter-redis-hang: a second wait would show on the second.
      const first = Promise.all([...hang.on, ...hang.off].map(timed));
      await sleep(50);
      const second = Promise.all([...hang.on, ...hang.off].map(timed));
      during = [...(await first), ...(await second)];
      // The hung master's keys opened its circuit (at most 15 s, far below the cluster's own timeout).
      const deadline = Date.now() + 10_000;
      while ((await readyz())['redisCircuitOpen'] === undefined && Date.now() < deadline) {
        await Promise.all(hang.on.map(timed));
      }
      circuits = (await readyz())['redisCircuitOpen'];
      whileOpen = await Promise.all([...open.on, ...open.off].map(timed));
    } finally {
      cluster.signal(port, 'SIGCONT');
    }

    const onHung = <T extends Json>(replies: T[], keys: string[]): T[] =>
      replies.filter((r) => keys.includes(String(r['key'])));
    // The hung master's keys: the policy (closed) answered, within the bound.
    expect(onHung(during, hang.on).every((r) => r['status'] === 503)).toBe(true);
    expect(Math.max(...during.map((r) => r.ms))).toBeLessThan(HANG_BOUND_MS);
    // The other masters' keys: Redis decided (two acquires each, both admitted).
    expect(onHung(during, hang.off).map((r) => r['code'])).toEqual(
      Array<string>(2 * PER_SIDE).fill('OK'),
    );
    // Only the hung master's circuit is open; its keys are answered at once, the others by Redis.
    expect(circuits).toEqual([node]);
    expect(onHung(whileOpen, open.on).every((r) => r['status'] === 503)).toBe(true);
    expect(Math.max(...onHung(whileOpen, open.on).map((r) => r.ms))).toBeLessThan(OPEN_BOUND_MS);
    expect(onHung(whileOpen, open.off).map((r) => r['code'])).toEqual(
      Array<string>(PER_SIDE).fill('OK'),
    );

    // Resumed: the circuit closes and every master decides exactly again.
    await waitReady(limiter!, 'ready');
    expect((await readyz())['redisCircuitOpen']).toBeUndefined();
    const exact = await Promise.all(
      [...back.on, ...back.off].map((key) =>
        Promise.all(
          Array.from({ length: LIMIT + 3 }, () => httpAcquire(limiter!.url, { key, quota })),
        ),
      ),
    );
    for (const replies of exact) {
      expect(replies.map((r) => r['code']).sort()).toEqual([
        ...Array<string>(LIMIT).fill('OK'),
        ...Array<string>(3).fill('RATE_LIMITED'),
      ]);
    }
    expect(limiter!.output().match(/circuit open/g)).toHaveLength(1);
  });
});
