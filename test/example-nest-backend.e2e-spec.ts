/**
 * The example NestJS backend (examples/nest-backend) as a process of its own, against two real
 * limiter replicas (one NATS queue group, cluster scope in the shared Redis, the example's
 * quotas.yaml): under the limit 200 with headers, over it 429 with Retry-After, the skipped
 * routes never limited, one limit for both replicas exactly, and both replicas answering.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from './support/limiter-http';
import { freePort, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { NATS_URL } from './support/nest-limiter';
import { startReplicas } from './support/replicas';
import { awayFromWindowEnd, redisClock } from './support/window';

jest.setTimeout(120_000);

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const root = join(__dirname, '..');
const QUOTAS = join(root, 'examples', 'nest-backend', 'quotas.yaml');
const API_LIMIT = 5;
const REPORTS_LIMIT = 2;
const MINUTE = 60_000;

interface Example {
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
}

/** Runs the example from its sources; resolves once its health route answers. */
async function startExample(env: Record<string, string>): Promise<Example> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', 'examples/nest-backend/src/main.ts'],
    {
      cwd: root,
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`example exited ${child.exitCode}:\n${out}`);
    try {
      if ((await fetch(`${url}/greetings/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`example did not start:\n${out}`);
    }
    await sleep(100);
  }
  return { url, child, output: () => out };
}

/** Stops the example by SIGTERM (its shutdown hooks drain the NATS connection); bounded. */
async function stopExample(example: Example): Promise<number | null> {
  if (example.child.exitCode !== null) return example.child.exitCode;
  const exited = new Promise<number | null>((r) => example.child.once('exit', (code) => r(code)));
  example.child.kill('SIGTERM');
  const timer = setTimeout(() => example.child.kill('SIGKILL'), 15_000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/** The decisions a replica answered for `quota`, every code summed (ratelimit_decisions_total). */
async function decisions(limiter: LimiterProcess, quota: string): Promise<number> {
  const text = await (await fetch(`${limiter.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('ratelimit_decisions_total{') && l.includes(`quota="${quota}"`))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

function get(url: string, apiKey: string): Promise<Response> {
  return fetch(url, { headers: { 'x-api-key': apiKey } });
}

describe('examples/nest-backend against two limiter replicas', () => {
  const dir = mkdtempSync(join(tmpdir(), 'example-nest-'));
  const prefix = uniquePrefix();
  const limiters: LimiterProcess[] = [];
  let example: Example | undefined;
  let redisNow: () => number;

  beforeAll(async () => {
    await startReplicas(limiters, { prefix, configFile: QUOTAS, dir });
    example = await startExample({ NATS_URL, NATS_SUBJECT_PREFIX: prefix });
    redisNow = await redisClock(REDIS_URL);
  });
  afterAll(async () => {
    if (example !== undefined) await stopExample(example);
    await Promise.all(limiters.map((l) => l.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('admits the limit exactly across both replicas, with headers, then 429 with Retry-After', async () => {
    const key = randomUUID();
    // Cluster scope counts in Redis's fixed minutes: stay inside one.
    await awayFromWindowEnd(MINUTE, 20_000, redisNow);
    for (let i = 1; i <= API_LIMIT; i++) {
      const res = await get(`${example!.url}/greetings/ada`, key);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ greeting: 'Hello, ada!' });
      expect(res.headers.get('ratelimit-limit')).toBe(String(API_LIMIT));
      expect(res.headers.get('ratelimit-remaining')).toBe(String(API_LIMIT - i));
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    }
    for (let i = 0; i < API_LIMIT; i++) {
      const refused = await get(`${example!.url}/greetings/ada`, key);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED' });
    }
    // The service that asks the limiter itself sees the one shared count.
    const allowance = await get(`${example!.url}/greetings/allowance`, key);
    expect(allowance.status).toBe(200);
    expect(await allowance.json()).toMatchObject({
      scope: 'cluster',
      limits: [expect.objectContaining({ limit: API_LIMIT, used: API_LIMIT, remaining: 0 })],
    });
  });

  it('admits the limit exactly when the calls come at once', async () => {
    const key = randomUUID();
    await awayFromWindowEnd(MINUTE, 20_000, redisNow);
    const statuses = await Promise.all(
      Array.from({ length: API_LIMIT * 3 }, () =>
        get(`${example!.url}/greetings/grace`, key).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(API_LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(API_LIMIT * 2);
  });

  it('never limits the skipped route', async () => {
    const key = randomUUID();
    for (let i = 0; i < API_LIMIT * 2; i++) {
      const res = await get(`${example!.url}/greetings/health`, key);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    }
  });

  it('limits the throttler route by the limiter quota of the same name', async () => {
    const key = randomUUID();
    await awayFromWindowEnd(MINUTE, 20_000, redisNow);
    for (let i = 1; i <= REPORTS_LIMIT; i++) {
      const res = await get(`${example!.url}/reports`, key);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining-reports')).toBe(String(REPORTS_LIMIT - i));
    }
    const refused = await get(`${example!.url}/reports`, key);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after-reports'))).toBeGreaterThanOrEqual(1);
  });

  it('spread the calls over both replicas', async () => {
    // Sequential calls go one per NATS request; the queue group gives each to either replica.
    const counts = await Promise.all(limiters.map((l) => decisions(l, 'example-api')));
    expect(counts.every((n) => n > 0)).toBe(true);
    expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(API_LIMIT * 5);
  });

  it('stops on SIGTERM, draining its connection', async () => {
    expect(await stopExample(example!)).toBe(0);
    example = undefined;
  });
});
