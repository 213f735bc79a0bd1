import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLimiter, type LimiterProcess } from './support/limiter-process';

// A sliding minute: the three admissions stay inside it however the test is timed, where a fixed
// window could reset at a minute boundary between the two runs.
const CONFIG = `quotas:
  - name: per-minute
    limits:
      - { name: rpm, unit: requests, limit: 5, window: 1m, algorithm: sliding_window }
`;

interface Reply {
  allowed: boolean;
  code: string;
  remaining: number;
}

async function acquire(limiter: LimiterProcess, key: string): Promise<Reply> {
  const res = await fetch(`${limiter.url}/v1/acquire`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key, quota: 'per-minute' }),
  });
  return (await res.json()) as Reply;
}

async function admittedOf(limiter: LimiterProcess, key: string, attempts: number): Promise<number> {
  let admitted = 0;
  for (let i = 0; i < attempts; i++) if ((await acquire(limiter, key)).allowed) admitted++;
  return admitted;
}

async function metricValue(limiter: LimiterProcess, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${limiter.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

jest.setTimeout(60_000);

describe('limiter usage survives a restart (DATA_DIR)', () => {
  let dir: string;
  let env: Record<string, string>;
  const running: LimiterProcess[] = [];

  const start = async (): Promise<LimiterProcess> => {
    const limiter = await startLimiter(env);
    running.push(limiter);
    return limiter;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'limiter-ops-persist-'));
    writeFileSync(join(dir, 'limits.yaml'), CONFIG);
    env = { NATS_URL: '', CONFIG_FILE: join(dir, 'limits.yaml'), DATA_DIR: join(dir, 'data') };
  });

  afterEach(async () => {
    for (const limiter of running.splice(0)) await limiter.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a per-minute quota usage across SIGTERM: 3 admitted, then only 2 more', async () => {
    const first = await start();
    expect(await admittedOf(first, 'user-1', 3)).toBe(3);
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(readdirSync(join(dir, 'data'))).toContain('limiter.sqlite');

    const second = await start();
    expect(await admittedOf(second, 'user-1', 5)).toBe(2);
    const refused = await acquire(second, 'user-1');
    expect(refused).toMatchObject({ allowed: false, code: 'RATE_LIMITED', remaining: 0 });
    // Another key was never charged.
    expect(await admittedOf(second, 'user-2', 5)).toBe(5);
    expect(await second.stop('SIGTERM')).toBe(0);
  });

  it('keeps what the periodic write saw across a crash (SIGKILL)', async () => {
    const first = await start();
    expect(await admittedOf(first, 'user-1', 4)).toBe(4);
    const deadline = Date.now() + 15_000;
    while (
      ((await metricValue(first, 'ratelimit_persistence_writes_total{result="ok"}')) ?? 0) < 1
    ) {
      if (Date.now() > deadline) throw new Error('no periodic write within 15 s');
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await first.stop('SIGKILL')).toBeNull();

    const second = await start();
    expect(await admittedOf(second, 'user-1', 5)).toBe(1);
    expect(await second.stop('SIGTERM')).toBe(0);
  });

  it('starts empty when the database is damaged, moves it aside, and persists again', async () => {
    const data = join(dir, 'data');
    rmSync(data, { recursive: true, force: true });
    mkdirSync(data);
    writeFileSync(join(data, 'limiter.sqlite'), 'this is not a database '.repeat(200));

    const first = await start();
    expect(first.output()).toContain('is damaged');
    expect(readdirSync(data).some((f) => f.startsWith('limiter.sqlite.damaged-'))).toBe(true);
    expect(await admittedOf(first, 'user-1', 3)).toBe(3);
    expect(await first.stop('SIGTERM')).toBe(0);

    const second = await start();
    expect(await admittedOf(second, 'user-1', 5)).toBe(2);
    expect(await second.stop('SIGTERM')).toBe(0);
  });

  it('restores stored usage once a config that was invalid at start is fixed', async () => {
    const first = await start();
    expect(await admittedOf(first, 'user-1', 3)).toBe(3);
    expect(await first.stop('SIGTERM')).toBe(0);

    writeFileSync(env['CONFIG_FILE']!, CONFIG.replace('limit: 5', 'limit: five'));
    const second = await start();
    expect((await fetch(`${second.url}/readyz`)).status).toBe(503);
    expect((await acquire(second, 'user-1')).code).toBe('UNKNOWN_QUOTA');

    writeFileSync(env['CONFIG_FILE']!, CONFIG);
    const deadline = Date.now() + 10_000;
    while ((await fetch(`${second.url}/readyz`)).status !== 200) {
      if (Date.now() > deadline) throw new Error('the fixed config was not loaded within 10 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await admittedOf(second, 'user-1', 5)).toBe(2);
    expect(await second.stop('SIGTERM')).toBe(0);
  });
});
