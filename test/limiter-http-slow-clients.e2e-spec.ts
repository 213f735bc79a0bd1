/**
 * Slow and hostile HTTP clients against the real limiter process (issue 11 point 4): a request
 * must arrive within HTTP_REQUEST_TIMEOUT_MS, connections are capped, and SIGTERM exits within
 * DRAIN_TIMEOUT_MS whatever the clients do, answering every waiter in the contract's shape and
 * saving usage. The slow clients here would take minutes to finish: being cut or outlived is
 * what the tests check, never how fast anything runs.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { freezableProxy, type FreezableProxy } from './support/freezable-proxy';
import { configFile, natsAcquire, waitReady, type Json } from './support/limiter-http';
import { waitUntil } from './support/nats-process';
import { privateRedis, type RedisProcess } from './support/redis-process';
import {
  headRead,
  openRaw,
  parseResponse,
  rawRequest,
  requestHead,
  within,
  type RawConnection,
} from './support/raw-http';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(90_000);

const HOUR = 3_600_000;
const SHARED_NATS = 'nats://127.0.0.1:4222';

/**
 * A body of 1 000 bytes sent one byte every 500 ms (500 s to finish), once the server has read
 * the request's head: the request is then in flight, not a connection it has yet to read.
 */
async function slowBody(port: number, path = '/v1/acquire'): Promise<RawConnection> {
  const client = await openRaw(port, requestHead('POST', path, 1000));
  await headRead(client);
  client.write('{');
  client.trickle(500);
  return client;
}

describe('HTTP request timeouts (HTTP_REQUEST_TIMEOUT_MS=1000)', () => {
  let limiter: LimiterProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-slow-'));

  beforeAll(async () => {
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: dataDir,
      HTTP_REQUEST_TIMEOUT_MS: '1000',
      MAX_REQUESTS: '1',
      MAX_REQUESTS_IN_QUEUE: '5',
      WINDOW_MILLIS: String(HOUR),
    });
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('cuts a body sent a byte at a time, answering 408 with a reply naming the body', async () => {
    const client = await slowBody(limiter.port);

    await within('the slow body to be cut', 20_000, client.closed);
    const response = parseResponse(client.received());
    expect(response?.status).toBe(408);
    expect(JSON.parse(response!.body)).toMatchObject({
      ok: false,
      allowed: false,
      code: 'INVALID_REQUEST',
      field: 'body',
    });
  });

  it('cuts headers sent a byte at a time, and a connection that sends nothing', async () => {
    const headers = await openRaw(limiter.port, 'POST /v1/acquire HTTP/1.1\r\n');
    headers.trickle(500, 'x');
    const silent = await openRaw(limiter.port);

    await within(
      'both connections to be cut',
      20_000,
      Promise.all([headers.closed, silent.closed]),
    );
    expect(parseResponse(headers.received())?.status).toBe(408);
  });

  it('leaves a waiting acquire alone past the timeout: it is answered when its wait ends', async () => {
    await awayFromWindowEnd(HOUR, 20_000);
    const key = `wait-${randomUUID()}`;
    const first = await fetch(`${limiter.url}/v1/acquire`, {
      method: 'POST',
      body: JSON.stringify({ key }),
    });
    expect(first.status).toBe(200);

    // Silent for 3 s, three request timeouts: the answer still comes, at the end of the wait.
    const waiter = await fetch(`${limiter.url}/v1/acquire`, {
      method: 'POST',
      body: JSON.stringify({ key, wait: true, maxWaitMs: 3_000 }),
    });
    expect(waiter.status).toBe(429);
    expect(await waiter.json()).toMatchObject({ allowed: false, code: 'WAIT_TIMEOUT', key });
  });
});

describe('HTTP_MAX_CONNECTIONS', () => {
  let limiter: LimiterProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-cap-'));

  beforeAll(async () => {
    limiter = await startLimiter({ NATS_URL: '', DATA_DIR: dataDir, HTTP_MAX_CONNECTIONS: '3' });
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('closes connections beyond the cap at once, and takes new ones when some close', async () => {
    // The test's own fetch pool may hold a connection too: open until one is refused.
    const held: RawConnection[] = [];
    let refused: RawConnection | undefined;
    while (refused === undefined && held.length < 6) {
      const client = await openRaw(limiter.port, rawRequest('GET', '/healthz'));
      const response = await within('an answer or a close', 10_000, client.answered);
      if (response === undefined) refused = client;
      else held.push(client);
    }

    expect(refused?.received()).toBe('');
    expect(held.length).toBeLessThanOrEqual(3);
    for (const client of held) client.destroy();
    await waitUntil('a connection to be taken again', async () => {
      const again = await openRaw(limiter.port, rawRequest('GET', '/healthz'));
      const response = await within('an answer or a close', 10_000, again.answered);
      again.destroy();
      return response?.status === 200;
    });
  });
});

describe('SIGTERM with slow clients and waiting acquires (DRAIN_TIMEOUT_MS=2000)', () => {
  const prefix = uniquePrefix();
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-drain-'));
  const env = {
    NATS_URL: SHARED_NATS,
    NATS_SUBJECT_PREFIX: prefix,
    NATS_QUEUE_GROUP: `q-${randomUUID()}`,
    DATA_DIR: dataDir,
    DRAIN_TIMEOUT_MS: '2000',
    // Long enough that only the drain deadline can cut the slow clients.
    HTTP_REQUEST_TIMEOUT_MS: '120000',
    MAX_REQUESTS: '1',
    MAX_REQUESTS_IN_QUEUE: '20',
    // An hour: a window the limiter persists, and one the waiters cannot outlast.
    WINDOW_MILLIS: String(HOUR),
  };
  let limiter: LimiterProcess | undefined;
  let nc: NatsConnection;

  beforeAll(async () => {
    nc = await connect({ servers: SHARED_NATS });
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    await nc?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('exits 0 within the drain bound, answers every waiter UNAVAILABLE, saves usage', async () => {
    limiter = await startLimiter(env);
    await waitReady(limiter, 'disabled');
    await awayFromWindowEnd(HOUR, 60_000);
    const key = `drain-${randomUUID()}`;
    const admitted = await fetch(`${limiter.url}/rate/${key}`, { method: 'POST' });
    expect(admitted.status).toBe(200);

    const url = limiter.url;
    const apiWaiters = [0, 1, 2].map((i) =>
      fetch(`${url}/v1/acquire`, {
        method: 'POST',
        body: JSON.stringify({ key, wait: true, requestId: `http-${i}` }),
      }),
    );
    const goccWaiters = [0, 1].map(() =>
      fetch(`${url}/rate/${key}?canWait=true`, { method: 'POST' }),
    );
    const natsWaiters = [0, 1, 2].map((i) =>
      natsAcquire(nc, `${prefix}.acquire`, { key, wait: true, requestId: `nats-${i}` }),
    );
    await waitUntil('eight queued waiters', async () => {
      const stats = (await (await fetch(`${url}/v1/stats/${key}`)).json()) as Json;
      return stats.queued === 8;
    });
    const slow = await Promise.all(Array.from({ length: 20 }, () => slowBody(limiter!.port)));

    const started = Date.now();
    const exitCode = await limiter.stop('SIGTERM');
    const tookMs = Date.now() - started;

    expect(exitCode).toBe(0);
    // The drain bound plus the last write and the exit; the slow clients alone would take 500 s.
    expect(tookMs).toBeLessThan(2_000 + 10_000);
    for (const res of await Promise.all(apiWaiters)) {
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ allowed: false, code: 'UNAVAILABLE', key });
    }
    for (const res of await Promise.all(goccWaiters)) {
      expect(res.status).toBe(503);
      expect(await res.text()).toBe('the limiter is shutting down');
    }
    const natsReplies = await Promise.all(natsWaiters);
    expect(natsReplies.map((r) => [r.requestId, r.code])).toEqual([
      ['nats-0', 'UNAVAILABLE'],
      ['nats-1', 'UNAVAILABLE'],
      ['nats-2', 'UNAVAILABLE'],
    ]);
    // The slow clients were answered in the route's shape before their connections closed.
    await within('every slow client to be closed', 5_000, Promise.all(slow.map((c) => c.closed)));
    for (const client of slow) {
      const response = parseResponse(client.received());
      expect(response?.status).toBe(503);
      expect(JSON.parse(response!.body)).toMatchObject({ allowed: false, code: 'UNAVAILABLE' });
    }

    // Usage saved: a new process on the same DATA_DIR still counts the one admission.
    limiter = await startLimiter({ ...env, NATS_URL: '' });
    const stats = (await (await fetch(`${limiter.url}/v1/stats/${key}`)).json()) as Json;
    expect(stats.limits).toEqual([expect.objectContaining({ used: 1, remaining: 0 })]);
  });
});

describe('requests completed while draining (issue 11 point 10)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-draining-'));
  let limiter: LimiterProcess | undefined;

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers decide, release and usage 503 UNAVAILABLE in their own shapes', async () => {
    limiter = await startLimiter({ NATS_URL: '', DATA_DIR: dataDir, DRAIN_TIMEOUT_MS: '10000' });
    const key = `late-${randomUUID()}`;
    const bodies: [string, string][] = [
      ['/v1/decide', JSON.stringify({ key })],
      ['/v1/release', JSON.stringify({ key, requestId: 'r-1' })],
      ['/v1/usage', JSON.stringify({ key, cost: { requests: 1 } })],
    ];
    // Each request's head is read (100 Continue), its body not yet sent.
    const posts = await Promise.all(
      bodies.map(async ([path, body]) => {
        const client = await openRaw(limiter!.port, requestHead('POST', path, body.length));
        await headRead(client);
        return client;
      }),
    );
    const port = limiter.port;
    const exited = limiter.stop('SIGTERM');
    await waitUntil('the limiter to stop accepting connections', async () => {
      try {
        (await openRaw(port)).destroy();
        return false;
      } catch {
        return true;
      }
    });

    posts.forEach((client, i) => client.write(bodies[i]![1]));
    const replies = await within('every answer', 10_000, Promise.all(posts.map((c) => c.answered)));

    expect(replies.map((r) => r?.status)).toEqual([503, 503, 503]);
    expect(JSON.parse(replies[0]!.body)).toMatchObject({
      allowed: false,
      code: 'UNAVAILABLE',
      key,
      reason: 'the limiter is shutting down',
    });
    for (const reply of replies.slice(1)) {
      expect(JSON.parse(reply!.body)).toEqual({
        ok: false,
        allowed: false,
        code: 'UNAVAILABLE',
        reason: 'the limiter is shutting down',
      });
    }
    expect(await exited).toBe(0);
  });
});

describe('SIGTERM while Redis hangs (cluster scope, REDIS_TIMEOUT_MS=30000, DRAIN_TIMEOUT_MS=1500)', () => {
  const prefix = uniquePrefix();
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-hung-'));
  let redis: RedisProcess | undefined;
  let proxy: FreezableProxy | undefined;
  let limiter: LimiterProcess | undefined;
  let nc: NatsConnection | undefined;

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    await nc?.close();
    await proxy?.close();
    await redis?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a NATS request stuck in Redis UNAVAILABLE by the deadline and exits 0', async () => {
    redis = await privateRedis();
    proxy = await freezableProxy(redis.port);
    const quota = {
      name: 'hung',
      match: 'hung-*',
      scope: 'cluster',
      onStoreFailure: 'closed',
      limits: [{ name: 'rph', limit: 100, window: '1h' }],
    };
    limiter = await startLimiter({
      NATS_URL: SHARED_NATS,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `q-${randomUUID()}`,
      DATA_DIR: dataDir,
      CONFIG_FILE: configFile(dataDir, [quota]),
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      REDIS_TIMEOUT_MS: '30000',
      DRAIN_TIMEOUT_MS: '1500',
    });
    await waitReady(limiter, 'ready');
    nc = await connect({ servers: SHARED_NATS });
    const key = `hung-${randomUUID()}`;
    expect(await natsAcquire(nc, `${prefix}.acquire`, { key })).toMatchObject({ allowed: true });

    proxy.freeze();
    const stuck = natsAcquire(nc, `${prefix}.acquire`, { key, requestId: 'stuck' });
    // In the limiter, waiting on Redis: 30 s before REDIS_TIMEOUT_MS would answer it.
    await waitUntil('the request to be sent to Redis', () => proxy!.held().includes('stuck'));
    const started = Date.now();
    const exitCode = await limiter.stop('SIGTERM');

    expect(exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(1_500 + 10_000);
    expect(await stuck).toMatchObject({ allowed: false, code: 'UNAVAILABLE' });
  });
});
