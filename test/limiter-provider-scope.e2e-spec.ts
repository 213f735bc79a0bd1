/**
 * Provider model quotas stand for an organisation-wide limit (the provider's own RPM): with Redis
 * they are cluster scope by default, so two replicas together admit the RPM once, not once each.
 * PROVIDER_SCOPE=local opts out; without Redis they stay local. Real limiter processes, a private
 * redis-server (its counts cannot meet another test's or an earlier run's), no NATS.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpAcquire, waitReady, type Json } from './support/limiter-http';
import { startLimiter, type LimiterProcess } from './support/limiter-process';
import { privateRedis, type RedisProcess } from './support/redis-process';

jest.setTimeout(120_000);

/** anthropic's claude-opus-4: 50 requests per minute (docs/contract.md, Concepts). */
const MODEL = 'claude-opus-4';
const RPM = 50;
/** Per replica, more than the RPM: a replica alone could admit all of it. */
const SENT_TO_EACH = 40;

async function startPair(dir: string, env: Record<string, string>): Promise<LimiterProcess[]> {
  const config = join(dir, 'providers.yaml');
  writeFileSync(config, 'providers: [anthropic]\n');
  const pair = await Promise.all(
    ['a', 'b'].map((name) =>
      startLimiter({ NATS_URL: '', CONFIG_FILE: config, DATA_DIR: join(dir, name), ...env }),
    ),
  );
  await Promise.all(pair.map((l) => waitReady(l, env['REDIS_URL'] ? 'ready' : 'disabled')));
  return pair;
}

/**
 * SENT_TO_EACH requests for the model on each replica, in the same minute (one rpm window: a
 * run of 80 local requests is far shorter than the 60 s the window needs to slide).
 */
async function admittedByPair(pair: readonly LimiterProcess[]): Promise<number> {
  const replies = await Promise.all(
    pair.map(async (limiter) => {
      const mine: Json[] = [];
      for (let i = 0; i < SENT_TO_EACH; i++)
        mine.push(await httpAcquire(limiter.url, { key: MODEL }));
      return mine;
    }),
  );
  const all = replies.flat();
  expect(new Set(all.map((r) => r['quota']))).toEqual(new Set([MODEL]));
  return all.filter((r) => r['allowed'] === true).length;
}

async function statsScope(limiter: LimiterProcess): Promise<unknown> {
  const res = await fetch(`${limiter.url}/v1/stats/${MODEL}`);
  return ((await res.json()) as Json)['scope'];
}

describe('provider model quotas and scope', () => {
  let redis: RedisProcess;
  const dirs: string[] = [];
  let running: LimiterProcess[] = [];

  const freshDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'provider-scope-'));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    redis = await privateRedis();
  });

  afterEach(async () => {
    await Promise.all(running.map((l) => l.stop()));
    running = [];
  });

  afterAll(async () => {
    await redis.kill();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('with Redis, a model’s RPM is one limit across two replicas (cluster scope by default)', async () => {
    running = await startPair(freshDir(), { REDIS_URL: redis.url });
    expect(await admittedByPair(running)).toBe(RPM);
    expect(await Promise.all(running.map(statsScope))).toEqual(['cluster', 'cluster']);
  });

  it('PROVIDER_SCOPE=local opts out: each replica counts on its own, more than the RPM in all', async () => {
    running = await startPair(freshDir(), { REDIS_URL: redis.url, PROVIDER_SCOPE: 'local' });
    expect(await admittedByPair(running)).toBe(2 * SENT_TO_EACH);
    expect(await Promise.all(running.map(statsScope))).toEqual(['local', 'local']);
  });

  it('without Redis the models stay local', async () => {
    running = await startPair(freshDir(), {});
    expect(await admittedByPair(running)).toBe(2 * SENT_TO_EACH);
    expect(await Promise.all(running.map(statsScope))).toEqual(['local', 'local']);
  });
});
