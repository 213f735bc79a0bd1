/**
 * go-ratelimit's WaitForCapacity on provider models: an acquire with `wait: true` on a model's key
 * queues (FIFO, up to maxWaitMs or its deadline) instead of being refused at once, because model
 * quotas have a default queue (PROVIDER_QUEUE_SIZE, PROVIDER_MAX_WAIT_MS). Capacity is freed within
 * the test by releasing admitted requests (a release gives a sliding window its cost back), so
 * nothing waits for the provider's minute. Real limiter processes; a private redis-server for
 * cluster scope.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpAcquire, post, sleep, waitReady, type Json } from './support/limiter-http';
import { startLimiter, type LimiterProcess } from './support/limiter-process';
import { privateRedis, type RedisProcess } from './support/redis-process';

jest.setTimeout(120_000);

/** anthropic's claude-opus-4: 50 requests per minute (docs/contract.md, Concepts). */
const MODEL = 'claude-opus-4';
const RPM = 50;

const dirs: string[] = [];
const running: LimiterProcess[] = [];

async function limiterWith(env: Record<string, string>, redis = 'disabled'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'provider-wait-'));
  dirs.push(dir);
  const config = join(dir, 'providers.yaml');
  writeFileSync(config, 'providers: [anthropic]\n');
  const limiter = await startLimiter({ NATS_URL: '', CONFIG_FILE: config, DATA_DIR: dir, ...env });
  running.push(limiter);
  await waitReady(limiter, redis);
  return limiter.url;
}

/** Spends the model's whole RPM; the requestIds admitted, oldest first. */
async function exhaust(url: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < RPM; i++) {
    const reply = await httpAcquire(url, { key: MODEL, cost: { requests: 1, tokens: 10 } });
    expect(reply).toMatchObject({ allowed: true });
    ids.push(reply['requestId'] as string);
  }
  expect(await httpAcquire(url, { key: MODEL })).toMatchObject({
    allowed: false,
    code: 'RATE_LIMITED',
  });
  return ids;
}

async function queued(url: string): Promise<unknown> {
  return ((await (await fetch(`${url}/v1/stats/${MODEL}`)).json()) as Json)['queued'];
}

/** Polls until the model's queue holds `count` waiters. */
async function untilQueued(url: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await queued(url)) !== count) {
    if (Date.now() > deadline) throw new Error(`queue never reached ${count}`);
    await sleep(20);
  }
}

const release = (url: string, requestId: string): Promise<Json> =>
  post(url, '/v1/release', { key: MODEL, requestId });

afterAll(async () => {
  await Promise.all(running.map((l) => l.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('acquire { wait: true } on a provider model (local scope)', () => {
  it('waits in FIFO order and is admitted as capacity frees, each waiter by one release', async () => {
    const url = await limiterWith({});
    const ids = await exhaust(url);
    const first = httpAcquire(url, { key: MODEL, wait: true, requestId: 'first' });
    await untilQueued(url, 1);
    const second = httpAcquire(url, { key: MODEL, wait: true, requestId: 'second' });
    await untilQueued(url, 2);
    // Without wait, nobody overtakes the waiters.
    expect(await httpAcquire(url, { key: MODEL })).toMatchObject({ allowed: false });

    expect(await release(url, ids[0]!)).toMatchObject({ released: true });
    expect(await first).toMatchObject({ allowed: true, requestId: 'first', status: 200 });
    expect(await queued(url)).toBe(1);

    expect(await release(url, ids[1]!)).toMatchObject({ released: true });
    const admitted = await second;
    expect(admitted).toMatchObject({ allowed: true, requestId: 'second' });
    expect(admitted['waitedMs']).toBeGreaterThan(0);
  });

  it('answers WAIT_TIMEOUT after its maxWaitMs when nothing frees', async () => {
    const url = await limiterWith({});
    await exhaust(url);
    const reply = await httpAcquire(url, { key: MODEL, wait: true, maxWaitMs: 300 });
    expect(reply).toMatchObject({ allowed: false, code: 'WAIT_TIMEOUT', status: 429 });
    expect(reply['waitedMs']).toBeGreaterThanOrEqual(300);
    expect(await httpAcquire(url, { key: MODEL })).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('PROVIDER_QUEUE_SIZE bounds the queue (QUEUE_FULL); 0 refuses at once, as without wait', async () => {
    const one = await limiterWith({ PROVIDER_QUEUE_SIZE: '1' });
    await exhaust(one);
    const parked = httpAcquire(one, { key: MODEL, wait: true, maxWaitMs: 5_000 });
    await untilQueued(one, 1);
    expect(await httpAcquire(one, { key: MODEL, wait: true })).toMatchObject({
      allowed: false,
      code: 'QUEUE_FULL',
    });
    expect(await parked).toMatchObject({ code: 'WAIT_TIMEOUT' });

    const none = await limiterWith({ PROVIDER_QUEUE_SIZE: '0' });
    await exhaust(none);
    const reply = await httpAcquire(none, { key: MODEL, wait: true });
    expect(reply).toMatchObject({ allowed: false, code: 'RATE_LIMITED', waitedMs: 0 });
  });

  it('PROVIDER_MAX_WAIT_MS caps the wait a request asks for', async () => {
    const url = await limiterWith({ PROVIDER_MAX_WAIT_MS: '200' });
    await exhaust(url);
    const reply = await httpAcquire(url, { key: MODEL, wait: true, maxWaitMs: 30_000 });
    expect(reply).toMatchObject({ code: 'WAIT_TIMEOUT' });
    expect(reply['waitedMs']).toBeGreaterThanOrEqual(200);
    expect(reply['waitedMs']).toBeLessThan(30_000);
  });
});

describe('acquire { wait: true } on a provider model (cluster scope, Redis)', () => {
  let redis: RedisProcess;

  beforeAll(async () => {
    redis = await privateRedis();
  });

  afterAll(async () => {
    await redis.kill();
  });

  it('queues on the replica and times out at maxWaitMs when the RPM stays spent', async () => {
    const url = await limiterWith({ REDIS_URL: redis.url }, 'ready');
    await exhaust(url);
    const reply = await httpAcquire(url, { key: MODEL, wait: true, maxWaitMs: 300 });
    expect(reply).toMatchObject({ allowed: false, code: 'WAIT_TIMEOUT', quota: MODEL });
    expect(reply['waitedMs']).toBeGreaterThanOrEqual(300);
  });
});
