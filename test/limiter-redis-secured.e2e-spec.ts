/**
 * Secured connections to Redis (issue 12, point 6): cluster-scope quotas decided through a
 * private redis-server that wants a password (REDIS_URL=redis://:password@host), and through one
 * that speaks only TLS with a certificate of a CA the test made (rediss:// and REDIS_TLS_CA). A
 * wrong password, or a CA the limiter does not know, gives the quota's onStoreFailure answer and
 * a log line that says why; the process keeps serving and no password appears in its output.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { httpAcquire, type Json } from './support/limiter-http';
import { startLimiter, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import { makePki } from './support/pki';
import { privateRedis, type RedisProcess } from './support/redis-process';
import { startTcpGate, type TcpGate } from './support/tcp-gate';

jest.setTimeout(120_000);

const PASSWORD = 'redis-pw-4c91e2';
const WRONG = 'wrong-pw-0b7d55';
const root = mkdtempSync(join(tmpdir(), 'redis-secured-'));
const pki = makePki(join(root, 'pki'));
// onStoreFailure closed: a request Redis could not decide answers UNAVAILABLE (503).
const config = join(root, 'quotas.json');
writeFileSync(
  config,
  JSON.stringify({
    quotas: [
      {
        name: 'shared',
        match: 'shared-*',
        scope: 'cluster',
        onStoreFailure: 'closed',
        limits: [{ name: 'total', limit: 2, windowMs: 1e15, algorithm: 'fixed_window' }],
      },
    ],
  }),
);

const servers: RedisProcess[] = [];
const limiters: LimiterProcess[] = [];
const gates: TcpGate[] = [];
afterAll(async () => {
  await Promise.all(limiters.map((l) => l.stop()));
  await Promise.all(gates.map((g) => g.close()));
  await Promise.all(servers.map((s) => s.kill()));
  rmSync(root, { recursive: true, force: true });
});

async function limiterWith(name: string, env: Record<string, string>): Promise<LimiterProcess> {
  const limiter = await startLimiter({
    NATS_URL: '',
    CONFIG_FILE: config,
    DATA_DIR: join(root, name),
    ...env,
  });
  limiters.push(limiter);
  return limiter;
}

/** `url` with its port replaced by a TCP gate's in front of it, to count the client's dials. */
async function throughGate(url: string): Promise<{ gate: TcpGate; url: string }> {
  const port = Number(new URL(url).port);
  const gate = await startTcpGate(port);
  gates.push(gate);
  return { gate, url: url.replace(`:${port}`, `:${gate.port}`) };
}

const acquire = (limiter: LimiterProcess, key: string): Promise<Json> =>
  httpAcquire(limiter.url, { key, quota: 'shared' });

/** Decided in Redis: the limit holds across the requests, and the key's state is in Redis. */
async function decidedIn(redis: Redis, limiter: LimiterProcess, key: string): Promise<void> {
  await waitUntil('Redis answers', async () => (await acquire(limiter, key))['code'] === 'OK');
  expect(await acquire(limiter, key)).toMatchObject({ status: 200, code: 'OK' });
  expect(await acquire(limiter, key)).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
  expect((await redis.keys(`*shared:${key}`)).length).toBe(1);
}

/**
 * Not decided: onStoreFailure answers; the limiter's client (connected through `gate`) dials
 * again and again, yet the log says why once; nothing leaks; HTTP goes on.
 */
async function refused(gate: TcpGate, limiter: LimiterProcess, why: RegExp): Promise<void> {
  await waitUntil('the reason logged', () => why.test(limiter.output()));
  const accepted = gate.accepted;
  await waitUntil('dialled twice more', () => gate.accepted >= accepted + 2);
  for (let i = 0; i < 3; i++) {
    expect(await acquire(limiter, 'shared-refused')).toMatchObject({
      status: 503,
      code: 'UNAVAILABLE',
    });
  }
  const lines = limiter
    .output()
    .split('\n')
    .filter((line) => why.test(line));
  expect(lines).toHaveLength(1);
  expect(limiter.output()).not.toContain(PASSWORD);
  expect(limiter.output()).not.toContain(WRONG);
  expect(await (await fetch(`${limiter.url}/healthz`)).text()).toBe('OK');
}

describe('Redis with a password (requirepass)', () => {
  let redis: RedisProcess;
  let client: Redis;
  beforeAll(async () => {
    redis = await privateRedis({ password: PASSWORD });
    servers.push(redis);
    client = new Redis(redis.url);
  });
  afterAll(() => client.quit());

  it('decides a cluster-scope quota through REDIS_URL=redis://:password@host', async () => {
    const limiter = await limiterWith('auth-ok', { REDIS_URL: redis.url });
    await decidedIn(client, limiter, 'shared-auth');
    expect(limiter.output()).not.toContain(PASSWORD);
  });

  it('answers onStoreFailure with a wrong password, and logs WRONGPASS once', async () => {
    const { gate, url } = await throughGate(redis.url.replace(PASSWORD, WRONG));
    const limiter = await limiterWith('auth-wrong', { REDIS_URL: url });
    await refused(gate, limiter, /WRONGPASS/);
  });
});

describe('Redis over TLS (rediss://) with a private CA', () => {
  let redis: RedisProcess;
  let client: Redis;
  beforeAll(async () => {
    redis = await privateRedis({ password: PASSWORD, tls: { ...pki.server, ca: pki.ca } });
    servers.push(redis);
    client = new Redis(redis.url, { tls: { ca: readFileSync(pki.ca) } });
  });
  afterAll(() => client.quit());

  it('decides through rediss:// with REDIS_TLS_CA', async () => {
    const limiter = await limiterWith('tls-ok', { REDIS_URL: redis.url, REDIS_TLS_CA: pki.ca });
    await decidedIn(client, limiter, 'shared-tls');
  });

  it("without REDIS_TLS_CA the server's certificate is not trusted: onStoreFailure answers", async () => {
    const { gate, url } = await throughGate(redis.url);
    const limiter = await limiterWith('tls-untrusted', { REDIS_URL: url });
    await refused(gate, limiter, /self-signed certificate in certificate chain|unable to verify/);
  });
});
