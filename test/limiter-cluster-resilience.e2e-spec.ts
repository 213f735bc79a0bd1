/**
 * Cluster scope under faults, end to end: three real limiter processes share one private
 * redis-server (a port of its own, so that it can be flushed and killed), over NATS and HTTP at
 * once. The store-level tests check these with three connections, the cluster-scope test with one
 * process: here it is SCRIPT FLUSH under load, the sliding window's invariant across replicas, and
 * Redis killed and restarted under load.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { connect, type NatsConnection } from 'nats';
import {
  brief,
  burst,
  clock,
  intoWindow,
  mostWithinSpan,
  redisOffset,
  startLoad,
  targetsFor,
  type Load,
  type Sample,
  type Transports,
} from './support/cluster-load';
import { stopRig } from './support/cleanup';
import { configFile, metric, sleep, waitReady, type Json } from './support/limiter-http';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import { privateRedis, type RedisProcess } from './support/redis-process';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(120_000);

const NATS_URL = 'nats://127.0.0.1:4222';
/** Every request must be answered within this; none of them waits in a queue. */
const DEADLINE_MS = 5_000;
const REPLICAS = 3;
/** One worker per replica over HTTP and as many over NATS. */
const TARGETS = targetsFor(REPLICAS);

const requests = (limit: number, windowMs: number, algorithm: string, name = 'r'): Json => ({
  name,
  unit: 'requests',
  limit,
  windowMs,
  algorithm,
});

const admitted = (samples: readonly Sample[]): Sample[] =>
  samples.filter((s) => s.reply?.['allowed'] === true);

/** Samples whose answer is not one of `codes` with its HTTP status, or that got no answer. */
function unexpected(samples: readonly Sample[], codes: Record<string, number>): Json[] {
  return samples
    .filter((s) => {
      const code = s.reply?.['code'];
      if (typeof code !== 'string' || !(code in codes)) return true;
      return s.via === 'http' && s.status !== codes[code];
    })
    .map(brief);
}

/** Runs `work` while `redis` gets SCRIPT FLUSH back to back; the flushing stops either way. */
async function whileFlushing<T>(redis: Redis, work: () => Promise<T>): Promise<T> {
  let flushing = true;
  const flusher = (async () => {
    while (flushing) await redis.script('FLUSH');
  })();
  try {
    return await work();
  } finally {
    flushing = false;
    await flusher;
  }
}

/** Phases of the Redis outage test; a request's key names the phase it was sent in. */
type Phase = 'up' | 'down' | 'back';

describe('cluster scope under faults: three limiters, one private Redis', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cluster-resilience-'));
  const prefix = uniquePrefix();
  const run = randomUUID();
  const quota = {
    // Never refuse: any refusal or 503 is a failure of the store, not of the limit. Four quotas of
    // one script put several calls of it in flight on each connection at once.
    wide: [0, 1, 2, 3].map((i) => `wide${i}-${run}`),
    ten: `ten-${run}`,
    sliding: `sliding-${run}`,
    closed: `closed-${run}`,
    local: `local-${run}`,
  };
  const limiters: LimiterProcess[] = [];
  let redis: RedisProcess | undefined;
  /** Talks to the private Redis directly: SCRIPT FLUSH, TIME, INFO. */
  let admin: Redis | undefined;
  let nc: NatsConnection | undefined;
  let io: Transports;
  /** Every stream started, so that a test failing half way cannot leave one running. */
  const loads: Load[] = [];
  const load = (...args: Parameters<typeof startLoad>): Load => {
    const started = startLoad(...args);
    loads.push(started);
    return started;
  };

  beforeAll(async () => {
    redis = await privateRedis();
    // `closed` on the quotas that must never see a store failure, so one shows up as a 503
    // rather than hiding behind a local decision.
    const quotas = [
      ...quota.wide.map((name) => ({
        name,
        scope: 'cluster',
        onStoreFailure: 'closed',
        // Every algorithm, so the flushed script holds every algorithm's code.
        limits: [
          requests(1_000_000, 60_000, 'fixed_window', 'f'),
          requests(1_000_000, 60_000, 'sliding_window', 's'),
          requests(1_000_000, 60_000, 'token_bucket', 't'),
        ],
      })),
      {
        name: quota.ten,
        scope: 'cluster',
        onStoreFailure: 'closed',
        limits: [requests(10, 2_000, 'fixed_window')],
      },
      {
        name: quota.sliding,
        scope: 'cluster',
        onStoreFailure: 'closed',
        limits: [requests(20, 1_000, 'sliding_window')],
      },
      {
        name: quota.closed,
        scope: 'cluster',
        onStoreFailure: 'closed',
        limits: [requests(10, 3_600_000, 'fixed_window')],
      },
      {
        name: quota.local,
        scope: 'cluster',
        onStoreFailure: 'local',
        limits: [requests(10, 3_600_000, 'fixed_window')],
      },
    ];
    const config = configFile(dir, quotas);
    const url = redis.url;
    // allSettled: when one replica fails to start, the others are in `limiters` (for afterAll)
    // before this throws.
    const started = await Promise.allSettled(
      Array.from({ length: REPLICAS }, async (_, i) => {
        limiters[i] = await startLimiter({
          NATS_URL,
          NATS_SUBJECT_PREFIX: prefix,
          NATS_QUEUE_GROUP: `q-${run}`,
          REDIS_URL: url,
          // A slow call on a busy 2-core machine must not pass for a store failure (503 on
          // `closed`); a killed Redis still fails every call at once.
          REDIS_TIMEOUT_MS: '2000',
          LIMITER_REPLICAS: String(REPLICAS),
          CONFIG_FILE: config,
          DATA_DIR: join(dir, `data-${i}`),
        });
      }),
    );
    const failed = started.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    await Promise.all(limiters.map((l) => waitReady(l)));
    admin = new Redis(url, { maxRetriesPerRequest: 1 });
    // Reconnect noise while Redis is down is expected; the calls that matter report their errors.
    admin.on('error', () => undefined);
    nc = await connect({ servers: NATS_URL });
    io = { urls: limiters.map((l) => l.url), nc, subject: `${prefix}.acquire` };
  });

  afterAll(() => stopRig({ loads, nc, admin, limiters, redis, dir }));

  it('SCRIPT FLUSH under load: every acquire over HTTP and NATS is answered from Redis, none fails, and a limit of 10 stays exact', async () => {
    const direct = admin!;
    await direct.config('RESETSTAT');

    // A steady stream on limits nothing reaches: six lone flushes (as after a restart or a
    // failover), then flushes back to back, which also hit a script just sent again after NOSCRIPT.
    // 24 workers, so that each connection has several calls of the script in flight at a flush.
    const steady = load(
      io,
      targetsFor(REPLICAS, 4),
      (worker, n) => ({ key: `flush-${worker % 5}`, quota: quota.wide[n % quota.wide.length]! }),
      { timeoutMs: DEADLINE_MS, pauseMs: () => Math.random() * 5 },
    );
    for (let i = 0; i < 6; i++) {
      await sleep(200);
      await direct.script('FLUSH');
    }
    await whileFlushing(direct, () => sleep(1_500));
    await sleep(100);
    const stream = await steady.stop();
    expect(unexpected(stream, { OK: 200 })).toEqual([]);
    expect(stream.length).toBeGreaterThan(100);
    // The flushes did hit scripts in use: EVALSHA met NOSCRIPT and the script was sent again.
    const errors = await direct.info('errorstats');
    expect(Number(/^errorstat_NOSCRIPT:count=(\d+)/m.exec(errors)?.[1] ?? 0)).toBeGreaterThan(0);

    // Exactness through flushes: 60 acquires on a limit of 10 per 2 s window, sent in groups over
    // ~50 ms while the scripts are flushed back to back, all within one window (started just
    // after it turned), admit exactly 10: a call sent again is never charged twice.
    const offset = await redisOffset(direct);
    for (let round = 0; round < 3; round++) {
      await intoWindow(() => clock() + offset, 2_000, 100, 300);
      const body = { key: `ten-${round}`, quota: quota.ten };
      const replies = await whileFlushing(direct, async () => {
        const groups: Promise<Sample[]>[] = [];
        for (let group = 0; group < 12; group++) {
          groups.push(burst(io, TARGETS, 5, body, DEADLINE_MS));
          await sleep(4);
        }
        return (await Promise.all(groups)).flat();
      });
      expect(unexpected(replies, { OK: 200, RATE_LIMITED: 429 })).toEqual([]);
      expect(admitted(replies)).toHaveLength(10);
    }

    for (const l of limiters) expect(await metric(l, 'ratelimit_store_failures_total')).toBe(0);
  });

  it('sliding_window across replicas: no span of windowMs holds more admissions than the limit', async () => {
    const windowMs = 1_000;
    const limit = 20;
    const offset = await redisOffset(admin!);
    const redisNow = (): number => clock() + offset;
    const body = { key: 'slide', quota: quota.sliding };
    // A trickle from every worker, and waves of 30 around each turn of an epoch-aligned second of
    // Redis time: 310 ms before it (late in a 100 ms sub-bucket), 30 ms after it (a fixed window
    // admits its limit again here, within one windowMs of the first wave), and 600 ms after it (a
    // ring one sub-bucket short would already free the first wave here). Only when the
    // window counts all of (t - windowMs, t] does every span of windowMs stay at the limit.
    await intoWindow(redisNow, windowMs, 100, 200);
    const firstTurn = Math.ceil(redisNow() / windowMs) * windowMs;
    const trickle = load(io, TARGETS, () => body, {
      timeoutMs: DEADLINE_MS,
      pauseMs: () => 150 + Math.random() * 200,
    });
    const waves: Promise<Sample[]>[] = [];
    for (let turn = firstTurn; turn < firstTurn + 3 * windowMs; turn += windowMs) {
      for (const at of [turn - 310, turn + 30, turn + 600]) {
        await sleep(at - redisNow());
        waves.push(burst(io, TARGETS, 30, body, DEADLINE_MS));
      }
    }
    await sleep(300);
    const samples = [...(await trickle.stop()), ...(await Promise.all(waves)).flat()];

    expect(unexpected(samples, { OK: 200, RATE_LIMITED: 429 })).toEqual([]);
    const ok = admitted(samples);
    // The window kept freeing and admitting over the ~3 s, not only once.
    expect(ok.length).toBeGreaterThan(2 * limit);
    // Decision instants t (Redis ms) all within [a, a + windowMs - 1] lie in (t_max - windowMs,
    // t_max], one window of the invariant.
    const worst = mostWithinSpan(ok, windowMs - 1);
    if (worst.count > limit) {
      throw new Error(
        `${worst.count} admissions within ${windowMs - 1} ms (limit ${limit}): ${JSON.stringify(worst.at)}`,
      );
    }
  });

  it('Redis killed under load: closed answers 503, local admits limit / 3 per replica, every request is answered, exact again within 5 s of Redis returning, and SIGTERM exits 0', async () => {
    const server = redis!;
    // `closed` and `local` are fixed hours on Redis's clock (the fallback's on this same host):
    // the exact counts below hold only if the whole test (~3 s, more under load) is in one hour.
    const offset = await redisOffset(admin!);
    await awayFromWindowEnd(3_600_000, 30_000, () => clock() + offset);
    let phase: Phase = 'up';
    const keyOf = (which: 'closed' | 'local', p: Phase): string => `${which}-${p}`;
    // Every worker alternates the two quotas; the key names the phase it was sent in.
    const traffic = load(
      io,
      TARGETS,
      (worker, n) => {
        const which = (worker + n) % 2 === 0 ? 'closed' : 'local';
        return {
          key: keyOf(which, phase),
          quota: quota[which],
          deadline: Date.now() + DEADLINE_MS,
        };
      },
      { timeoutMs: DEADLINE_MS, pauseMs: () => 10 },
    );
    const sentIn = (which: 'closed' | 'local', p: Phase): Sample[] =>
      traffic.seen().filter((s) => s.body['key'] === keyOf(which, p));
    // Redis has admitted the closed quota's 10 before it goes (a fixed wait was too short when slow).
    await waitUntil(
      '10 admitted before the kill',
      () => admitted(sentIn('closed', 'up')).length >= 10,
    );

    await server.kill();
    await Promise.all(limiters.map((l) => waitReady(l, 'degraded')));
    // Fresh keys from here: what they get is decided by the policies alone.
    phase = 'down';
    // Enough answers while down for the checks below: some closed, more than 3 local per replica.
    await waitUntil('answers by the policies while Redis is down', () => {
      const local = sentIn('local', 'down');
      const perReplica = [...Array(REPLICAS).keys()].map(
        (r) => local.filter((s) => s.replica === r).length,
      );
      return sentIn('closed', 'down').length > 0 && perReplica.every((n) => n > 3);
    });
    for (const l of limiters) expect(await metric(l, 'ratelimit_store_degraded')).toBe(1);

    phase = 'back';
    const restartedAt = clock();
    await server.start();
    // Exact again: 60 acquires on a fresh key, 10 over HTTP to each replica, admit exactly 10 and
    // refuse 50. A replica not reconnected yet answers 503, so this needs all three back.
    let probe: Sample[] = [];
    for (let attempt = 0; ; attempt++) {
      probe = await burst(
        io,
        TARGETS,
        60,
        { key: `probe-${attempt}`, quota: quota.closed },
        DEADLINE_MS,
      );
      // Only Redis admits on `closed`: never more than the limit, even while replicas reconnect.
      expect(admitted(probe).length).toBeLessThanOrEqual(10);
      if (unexpected(probe, { OK: 200, RATE_LIMITED: 429 }).length === 0) break;
      if (clock() - restartedAt > 5_000) break;
      await sleep(100);
    }
    const exactAfterMs = clock() - restartedAt;
    const samples = await traffic.stop();
    expect(unexpected(probe, { OK: 200, RATE_LIMITED: 429 })).toEqual([]);
    expect(admitted(probe)).toHaveLength(10);
    expect(exactAfterMs).toBeLessThan(5_000);

    // Every request of the stream was answered within its deadline, by Redis or by the policy.
    const byKey = (which: 'closed' | 'local', p: Phase): Sample[] =>
      samples.filter((s) => s.body['quota'] === quota[which] && s.body['key'] === keyOf(which, p));
    const closed = samples.filter((s) => s.body['quota'] === quota.closed);
    const local = samples.filter((s) => s.body['quota'] === quota.local);
    expect(unexpected(closed, { OK: 200, RATE_LIMITED: 429, UNAVAILABLE: 503 })).toEqual([]);
    expect(unexpected(local, { OK: 200, RATE_LIMITED: 429 })).toEqual([]);

    // Before the kill Redis decided: exactly 10 admitted over the three replicas.
    expect(admitted(byKey('closed', 'up'))).toHaveLength(10);
    // Answered while Redis was down (before it was started again): decided by the policy alone.
    const whileDown = (s: Sample): boolean => s.receivedAt < restartedAt;
    const closedDown = byKey('closed', 'down').filter(whileDown);
    expect(closedDown.length).toBeGreaterThan(0);
    expect(unexpected(closedDown, { UNAVAILABLE: 503 })).toEqual([]);
    const localDown = byKey('local', 'down').filter(whileDown);
    // floor(10 / 3) = 3 per replica; every replica had many requests, so exactly 3 × 3 in all.
    for (let replica = 0; replica < REPLICAS; replica++) {
      const own = localDown.filter((s) => s.replica === replica);
      expect(own.length).toBeGreaterThan(3);
      expect(admitted(own).length).toBeLessThanOrEqual(3);
    }
    expect(admitted(localDown)).toHaveLength(9);
    // After the restart only Redis admits on `closed`, exactly as before.
    expect(admitted(byKey('closed', 'back')).length).toBeLessThanOrEqual(10);

    const codes = await Promise.all(limiters.map((l) => l.stop()));
    expect(codes).toEqual([0, 0, 0]);
    for (const l of limiters) expect(l.output()).not.toMatch(/unhandled/i);
  });
});
