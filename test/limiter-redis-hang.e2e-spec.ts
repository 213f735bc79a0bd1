/**
 * A hung Redis (SIGSTOP: the connection stays open, nothing answers) and a killed one, under one
 * limiter process with REDIS_TIMEOUT_MS=1000 on a private redis-server: every request is answered
 * by its quota's onStoreFailure within REDIS_TIMEOUT_MS (not twice it), the circuit opens after a
 * few failures and then answers without asking Redis, and it closes once Redis answers again.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFile, httpAcquire, sleep, waitReady, type Json } from './support/limiter-http';
import { startLimiter, type LimiterProcess } from './support/limiter-process';
import { privateRedis, type RedisProcess } from './support/redis-process';
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

const HOUR_MS = 3_600_000;
const LIMIT = 10;
const POLICIES = ['closed', 'open', 'local'] as const;
type Policy = (typeof POLICIES)[number];

describe('a hung or killed Redis: bounded waits and a circuit per node', () => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-hang-'));
  const run = randomUUID().slice(0, 8);
  const quota = (policy: Policy): string => `${policy}-${run}`;
  let redis: RedisProcess;
  let limiter: LimiterProcess;
  let node: string;

  beforeAll(async () => {
    redis = await privateRedis();
    node = `127.0.0.1:${redis.port}`;
    const quotas = POLICIES.map((policy) => ({
      name: quota(policy),
      scope: 'cluster',
      onStoreFailure: policy,
      limits: [{ name: 'r', unit: 'requests', limit: LIMIT, window: '1h' }],
    }));
    limiter = await startLimiter({
      NATS_URL: '',
      REDIS_URL: redis.url,
      REDIS_TIMEOUT_MS: String(TIMEOUT_MS),
      LIMITER_REPLICAS: '2',
      // The circuit's open and close lines are logged at warn and log (info) level.
      LOG_LEVEL: 'info',
      CONFIG_FILE: configFile(dir, quotas),
      DATA_DIR: join(dir, 'data'),
    });
    await waitReady(limiter);
  });

  afterAll(async () => {
    redis.resume();
    expect(await limiter.stop()).toBe(0);
    await redis.kill();
    expect(limiter.output()).not.toMatch(/unhandled/i);
    rmSync(dir, { recursive: true, force: true });
  });

  const timed = (body: Json): Promise<Timed> => timedAcquire(limiter.url, body);
  const readyz = (): Promise<Json> => readyzOf(limiter);

  const circuitOpen = async (): Promise<boolean> => {
    const open = (await readyz())['redisCircuitOpen'];
    return Array.isArray(open) && open.includes(node);
  };

  /** The circuit gauge of this Redis on /metrics. */
  async function circuitGauge(): Promise<number> {
    const text = await (await fetch(`${limiter.url}/metrics`)).text();
    const prefix = `ratelimit_store_circuit_open{node="${node}"} `;
    const line = text.split('\n').find((l) => l.startsWith(prefix));
    if (line === undefined) throw new Error(`no ${prefix}on /metrics`);
    return Number(line.slice(prefix.length));
  }

  /** Sends one acquire per policy until /readyz says this node's circuit is open (at most 15 s). */
  async function tripCircuit(): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!(await circuitOpen())) {
      if (Date.now() > deadline)
        throw new Error(`the circuit did not open: ${JSON.stringify(await readyz())}`);
      await Promise.all(
        POLICIES.map((p) => httpAcquire(limiter.url, { key: `trip-${run}`, quota: quota(p) })),
      );
    }
  }

  /** Waits (at most 15 s) until the circuit is closed and /readyz says Redis is ready. */
  async function untilClosed(): Promise<number> {
    const started = Date.now();
    for (;;) {
      const body = await readyz();
      if (body['redis'] === 'ready' && body['redisCircuitOpen'] === undefined) {
        return Date.now() - started;
      }
      if (Date.now() - started > 15_000) throw new Error(`still open: ${JSON.stringify(body)}`);
      await sleep(20);
    }
  }

  /** 30 acquires at once on a fresh key of the closed quota: Redis alone admits, exactly LIMIT. */
  async function exactBurst(label: string): Promise<void> {
    const key = `${label}-${run}`;
    const replies = await Promise.all(
      Array.from({ length: 30 }, () => httpAcquire(limiter.url, { key, quota: quota('closed') })),
    );
    const codes = replies.map((r) => `${String(r['status'])} ${String(r['code'])}`).sort();
    expect(codes).toEqual([
      ...Array<string>(LIMIT).fill('200 OK'),
      ...Array<string>(30 - LIMIT).fill('429 RATE_LIMITED'),
    ]);
  }

  /** The policy's answer while Redis cannot decide: closed 503, open admitted, local its share. */
  function expectPolicyAnswers(replies: readonly Json[], perPolicy: number): void {
    const of = (p: Policy): Json[] => replies.filter((r) => r['quota'] === quota(p));
    for (const p of POLICIES) expect(of(p)).toHaveLength(perPolicy);
    for (const r of of('closed')) {
      expect(r).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
      expect(r['reason']).toMatch(/onStoreFailure: closed/);
    }
    for (const r of of('open')) {
      expect(r).toMatchObject({ status: 200, allowed: true });
      expect(r['reason']).toMatch(/onStoreFailure: open/);
    }
    // local: limit / LIMITER_REPLICAS = 5 in this replica's memory, the rest refused.
    const local = of('local');
    expect(local.filter((r) => r['allowed'] === true)).toHaveLength(LIMIT / 2);
    expect(local.filter((r) => r['allowed'] !== true).every((r) => r['status'] === 429)).toBe(true);
  }

  it('(a) SIGSTOP: every request is answered by its policy within REDIS_TIMEOUT_MS, not twice it', async () => {
    await awayFromWindowEnd(HOUR_MS, 60_000);
    // The connection is up and the scripts are loaded before Redis stops.
    await Promise.all(
      POLICIES.map((p) => httpAcquire(limiter.url, { key: `warm-${run}`, quota: quota(p) })),
    );
    const key = `a-${run}`;
    redis.pause();
    let replies: Timed[];
    try {
      // Waves 50 ms apart: the first wave's call goes out at once and hangs; the later waves'
      // calls are made while it is in flight, which is where a second wait would show.
      const waves: Promise<Timed[]>[] = [];
      for (let wave = 0; wave < 6; wave++) {
        const requests = POLICIES.flatMap((p) =>
          Array.from({ length: 3 }, () => timed({ key, quota: quota(p) })),
        );
        waves.push(Promise.all(requests));
        await sleep(50);
      }
      replies = (await Promise.all(waves)).flat();
    } finally {
      redis.resume();
    }
    const ms = replies.map((r) => Math.round(r.ms)).sort((x, y) => x - y);
    console.log(`during the hang (ms, sorted): ${ms.join(' ')}`);
    expectPolicyAnswers(replies, 18);
    expect(ms[ms.length - 1]).toBeLessThan(HANG_BOUND_MS);
    await untilClosed();
  });

  it('(b) once the circuit is open, requests are answered at once and none reaches Redis', async () => {
    await awayFromWindowEnd(HOUR_MS, 60_000);
    const key = `b-${run}`;
    redis.pause();
    let replies: Timed[];
    let gauge: number;
    try {
      await tripCircuit();
      gauge = await circuitGauge();
      replies = await Promise.all(
        POLICIES.flatMap((p) => Array.from({ length: 12 }, () => timed({ key, quota: quota(p) }))),
      );
    } finally {
      redis.resume();
    }
    expect(gauge).toBe(1);
    expectPolicyAnswers(replies, 12);
    const slowest = Math.max(...replies.map((r) => r.ms));
    console.log(`circuit open: slowest of ${replies.length} answers ${Math.round(slowest)} ms`);
    expect(slowest).toBeLessThan(OPEN_BOUND_MS);

    // Redis has answered everything it was sent: had any of those requests reached it, even
    // queued on the connection, the key would now have counts there.
    await untilClosed();
    for (const p of ['closed', 'open'] as const) {
      const res = await fetch(`${limiter.url}/v1/stats/${key}?quota=${quota(p)}`);
      expect({ status: res.status, ...((await res.json()) as Json) }).toMatchObject({
        status: 200,
        approved: 0,
        denied: 0,
      });
    }
  });

  it('(c) after SIGCONT the circuit closes, logged once each way, and decisions are exact again', async () => {
    await awayFromWindowEnd(HOUR_MS, 60_000);
    const opened = (): number => limiter.output().match(/circuit open/g)?.length ?? 0;
    const closed = (): number => limiter.output().match(/circuit closed/g)?.length ?? 0;
    const before = { opened: opened(), closed: closed() };
    redis.pause();
    try {
      await tripCircuit();
      // Requests while open do not log again.
      await Promise.all(
        Array.from({ length: 20 }, () =>
          httpAcquire(limiter.url, { key: `c-${run}`, quota: quota('open') }),
        ),
      );
    } finally {
      redis.resume();
    }
    const closedAfterMs = await untilClosed();
    console.log(`circuit closed ${closedAfterMs} ms after SIGCONT`);
    // A PING every 250 ms finds Redis back; 5 s is a bound no healthy run comes near.
    expect(closedAfterMs).toBeLessThan(5_000);
    expect(await circuitGauge()).toBe(0);
    await exactBurst('c-exact');
    // The line is logged asynchronously to the state change; wait for it (bounded).
    for (let i = 0; i < 50 && closed() === before.closed; i++) await sleep(20);
    expect({ opened: opened(), closed: closed() }).toEqual({
      opened: before.opened + 1,
      closed: before.closed + 1,
    });
  });

  it('(d) SIGKILL and a restart open the circuit and close it again', async () => {
    await awayFromWindowEnd(HOUR_MS, 60_000);
    await redis.kill();
    const key = `d-${run}`;
    let replies: Json[];
    try {
      await tripCircuit();
      expect(await circuitGauge()).toBe(1);
      replies = await Promise.all(
        POLICIES.flatMap((p) =>
          Array.from({ length: 12 }, () => httpAcquire(limiter.url, { key, quota: quota(p) })),
        ),
      );
    } finally {
      await redis.start();
    }
    expectPolicyAnswers(replies, 12);
    await untilClosed();
    expect(await circuitGauge()).toBe(0);
    await exactBurst('d-exact');
  });
});
