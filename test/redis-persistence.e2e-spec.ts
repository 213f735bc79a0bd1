/**
 * The Redis that docker-compose.yml and k8s/ ship, with their redis-server options on a private
 * server: killed (a crash) and started again on its directory, it comes back with its counts, and a
 * key at its limit stays refused. The same crash of a Redis without persistence forgets them, and
 * the key is admitted up to its limit again (docs/operations.md, "A Redis that restarts empty").
 */
import type { IStatefulSet } from 'kubernetes-models/apps/v1';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoFile } from './deploy/app-facts';
import { readComposeDocument, type ComposeFile } from './deploy/compose-file';
import { appContainer } from './deploy/k8s-objects';
import { readObjects } from './deploy/kustomize-base';
import { configFile, httpAcquire, waitReady, type Json } from './support/limiter-http';
import { startLimiter, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import { privateRedis, type RedisProcess } from './support/redis-process';

jest.setTimeout(120_000);

const LIMIT = 5;
const QUOTA = 'persisted';

/** The shipped options (Compose's and Kubernetes', which must agree), writing under `dir`. */
function shippedOptions(dir: string): string[] {
  const compose = readComposeDocument(repoFile('docker-compose.yml')) as ComposeFile;
  const composed = compose.services['redis']!.command as string[];
  const k8s = appContainer(readObjects('redis-statefulset.yaml')[0] as unknown as IStatefulSet);
  expect(k8s.args).toEqual(composed);
  const [server, ...options] = composed;
  expect(server).toBe('redis-server');
  return options.map((option, i) => (options[i - 1] === '--dir' ? dir : option));
}

describe('a Redis killed and started again', () => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-persistence-'));
  let redis: RedisProcess;
  let limiter: LimiterProcess;

  const acquire = (key: string): Promise<Json> =>
    httpAcquire(limiter.url, { key: `${QUOTA}-${key}` });
  /** Admits the key up to its limit: LIMIT admitted, then refused. */
  async function fill(key: string): Promise<void> {
    for (let i = 0; i < LIMIT; i++) expect(await acquire(key)).toMatchObject({ code: 'OK' });
    expect(await acquire(key)).toMatchObject({ code: 'RATE_LIMITED' });
  }
  /** Kills Redis and starts `next` on its port; the limiter decides in Redis again. */
  async function crash(next: (port: number) => Promise<RedisProcess>): Promise<void> {
    await redis.kill();
    redis = await next(redis.port);
    // onStoreFailure closed answers UNAVAILABLE until the limiter is connected again.
    await waitUntil('Redis answering again', async () => {
      const res = await fetch(`${limiter.url}/readyz`);
      return res.status === 200 && ((await res.json()) as Json)['redis'] === 'ready';
    });
  }

  beforeAll(async () => {
    mkdirSync(join(dir, 'aof'));
    redis = await privateRedis({ persistence: shippedOptions(join(dir, 'aof')) });
    limiter = await startLimiter({
      NATS_URL: '',
      REDIS_URL: redis.url,
      // Every decision in Redis, none from a leased slice.
      LEASE_HOT_RATE: '0',
      CONFIG_FILE: configFile(dir, [
        {
          name: QUOTA,
          match: `${QUOTA}-*`,
          scope: 'cluster',
          onStoreFailure: 'closed',
          // No refill within the test: 5 an hour.
          limits: [
            { name: 'r', unit: 'requests', limit: LIMIT, window: '1h', algorithm: 'token_bucket' },
          ],
        },
      ]),
      DATA_DIR: join(dir, 'data'),
    });
    await waitReady(limiter);
  });

  afterAll(async () => {
    await limiter?.stop();
    await redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with the shipped append-only file: the counts survive, the key stays refused', async () => {
    await fill('kept');
    await crash((port) => privateRedis({ port, persistence: shippedOptions(join(dir, 'aof')) }));
    expect(await acquire('kept')).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('without persistence: the counts are forgotten, the key admitted to its limit again', async () => {
    await crash((port) => privateRedis({ port }));
    await fill('forgotten');
    await crash((port) => privateRedis({ port }));
    let admitted = 0;
    while ((await acquire('forgotten'))['code'] === 'OK') admitted++;
    expect(admitted).toBe(LIMIT);
  });
});
