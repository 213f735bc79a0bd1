/**
 * npm run bench:cluster — decisions/s of cluster scope (ClusterScope: the requests of one
 * event-loop turn in one Lua call through ioredis, the reply built as the engine's), beside, in
 * the same run and against the same Redis:
 *   (a) a raw EVALSHA token bucket (the least a Redis limiter can do per decision), and
 *       rate-limiter-flexible's RateLimiterRedis (consume, on its own ioredis connection).
 *       Every peer gets the same loop: IN_FLIGHT calls outstanding, 10 000 keys round robin, one
 *       connection. Median of 3 rounds, peers alternating round by round; Redis's own time in
 *       scripts per decision (INFO commandstats) beside each;
 *   (b) Redis's bytes per key of sliding windows in both regimes;
 *   (c) capacity leases, one hot key: ClusterScope with leases (LEASE defaults, replicas 1) vs the
 *       raw EVALSHA token bucket on one key, a huge limit so that the slice keeps being renewed;
 *   (d) the same two over 100 000 keys drawn Zipf (s = 1.1), both on the same key sequence, with
 *       the share of decisions made from slices (the book's lease counters);
 *   (c) and (d) as (a): same Redis, median of 3, alternating, with Redis script calls per decision;
 *   stranded: three ClusterScopes (bench/cluster/stranded.ts), 3x overload on one key per algorithm;
 *   utilization end to end: three limiter processes leased beside three with leases off, one
 *       private redis-server, a steady overload per algorithm over HTTP and NATS, then a replica
 *       SIGKILLed mid-window (bench/cluster/utilization.ts; needs NATS).
 * A leased ClusterScope.acquire answers from its slice synchronously: a Promise per call would cost
 * more than the decision itself. Its loop (syncAwareLoop) runs IN_FLIGHT workers that call on at
 * once after a sync answer and await only a Promise answer (yielding to I/O every SYNC_BURST sync
 * answers): as in the peers' closed loop, IN_FLIGHT calls are outstanding at all times (a sync
 * answer is complete when returned), so calls that go to Redis get the peers' concurrency.
 * Run from sources (swc-node): the work is Redis round trips, not JIT-sensitive code.
 * BENCH_QUICK=1 shortens every run; BENCH_ONLY=utilization runs the end-to-end utilization alone.
 */
import { randomUUID } from 'node:crypto';
import type { NormalisedAcquire } from '@app/contracts';
import { compileQuota, type QuotaSpec } from '@app/engine';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { ClusterScope } from '../apps/limiter/src/cluster/cluster-scope';
import { RedisPool } from '../apps/limiter/src/cluster/redis-pool';
import { HOT_PERIOD_MS, HotKeys } from '../apps/limiter/src/cluster/lease/hot-keys';
import { LeaseBook } from '../apps/limiter/src/cluster/lease/lease-book';
import { RedisQuotaStore, type LeaseGrant } from '../apps/limiter/src/cluster/redis-quota-store';
import { DEFAULT_LEASE_SETTINGS } from '../apps/limiter/src/settings/limiter-settings';
import { strandedRun } from './cluster/stranded';
import { utilizationFigures } from './cluster/utilization';
import { topShare, zipfDraws } from './cluster/zipf';

const QUICK = process.env.BENCH_QUICK === '1';
const SECONDS = QUICK ? 0.5 : 3;
const ROUNDS = 3;
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 64);
const KEYS = 10_000;
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const HUGE = 1_000_000_000;
/** Sync answers a worker of syncAwareLoop takes in a row before it lets I/O and timers run. */
const SYNC_BURST = 256;
const ZIPF_KEYS = 100_000;
const ZIPF_S = 1.1;
const ZIPF_DRAWS = 1 << 20;
const STRANDED_WINDOWS = QUICK ? 3 : 5;
const UTILIZATION_WINDOWS = QUICK ? 2 : 8;
/** Whole windows (of 2 s) measured after the one in which a replica is killed. */
const KILLED_AFTER = QUICK ? 1 : 3;
const ONLY_UTILIZATION = process.env.BENCH_ONLY === 'utilization';

/** A textbook token bucket: read, refill, take, write, expire. One call per decision. */
const RAW_TOKEN_BUCKET = `
local rate, capacity, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(s[1]) or capacity, tonumber(s[2]) or now
tokens = math.min(capacity, tokens + (now - at) * rate / 1000)
local allowed = 0
if tokens >= cost then tokens = tokens - cost; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000))
return { allowed, math.floor(tokens) }
`;

const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Keeps IN_FLIGHT calls outstanding for `seconds`; returns completed calls per second. */
async function closedLoop(call: (i: number) => Promise<unknown>, seconds: number): Promise<number> {
  let done = 0;
  let next = 0;
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      await call(next++);
      done++;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return done / ((performance.now() - start) / 1000);
}

const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * closedLoop for a call that may answer synchronously (see the header): IN_FLIGHT workers; a
 * Promise answer is awaited, a sync one is done at once; completed calls per second, and calls.
 */
async function syncAwareLoop(
  call: (i: number) => unknown,
  seconds: number,
): Promise<{ rate: number; done: number }> {
  let done = 0;
  let next = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      let k = 0;
      for (; k < SYNC_BURST; k++) {
        const answer = call(next++);
        done++;
        if (answer instanceof Promise) {
          await answer;
          break;
        }
      }
      if (k === SYNC_BURST) await immediate();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { rate: done / ((performance.now() - start) / 1000), done };
}

/** Script calls (EVALSHA and EVAL) since the last CONFIG RESETSTAT. */
async function scriptCalls(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  let calls = 0;
  for (const m of stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(m[1]);
  return calls;
}

/** Microseconds Redis spent in scripts (EVALSHA and EVAL) since the last CONFIG RESETSTAT. */
async function scriptMicros(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  let micros = 0;
  for (const m of stats.matchAll(/cmdstat_(?:evalsha|eval):calls=\d+,usec=(\d+)/g)) {
    micros += Number(m[1]);
  }
  return micros;
}

/** Sliding windows as Redis keeps them: an exact log beside the same window in sub-buckets. */
const MEMORY_QUOTAS: [string, QuotaSpec['limits']][] = [
  ['10 requests a minute (log)', [minute('rpm', 'requests', 10)]],
  ['65 requests a minute (sub-buckets)', [minute('rpm', 'requests', 65)]],
  ['rpm 50 + tpm (logs)', [minute('rpm', 'requests', 50), minute('tpm', 'tokens', 40_000)]],
  ['rpm 65 + tpm (sub-buckets)', [minute('rpm', 'requests', 65), minute('tpm', 'tokens', 40_000)]],
];

function minute(name: string, unit: string, limit: number): QuotaSpec['limits'][number] {
  return { name, unit, limit, windowMs: 60_000, algorithm: 'sliding_window' };
}

/**
 * Bytes per key in Redis after 10 admissions a key, each at its own ms: the limits' state (field
 * `s`, msgpack) and the whole hash (MEMORY USAGE: the state, the 10 receipts, the key).
 */
async function memoryPerKey(redis: Redis, run: string): Promise<void> {
  const store = new RedisQuotaStore(redis, { timeoutMs: 30_000 });
  const keys = Array.from({ length: QUICK ? 20 : 200 }, (_, i) => `member-${i}`);
  console.log('');
  console.log('Redis bytes per key after 10 admissions a key (sliding windows of a minute):');
  console.log('');
  console.log('| quota | state (field s) | whole key (MEMORY USAGE) |');
  console.log('|---|---:|---:|');
  for (const [label, limits] of MEMORY_QUOTAS) {
    const name = `mem-${run}-${label.replace(/[^a-z0-9]+/gi, '-')}`;
    const quota = compileQuota({ name, limits });
    for (let i = 0; i < 10; i++) {
      await Promise.all(keys.map((k) => store.acquire(quota, k, { requests: 1, tokens: 500 })));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    let state = 0;
    let whole = 0;
    for (const k of keys) {
      const key = RedisQuotaStore.stateKey(name, k);
      state += await redis.hstrlen(key, 's');
      whole += Number(await redis.memory('USAGE', key));
    }
    console.log(`| ${label} | ${fmt(state / keys.length)} | ${fmt(whole / keys.length)} |`);
    await redis.del(...keys.map((k) => RedisQuotaStore.stateKey(name, k)));
  }
}

async function main(): Promise<void> {
  if (ONLY_UTILIZATION) return utilizationFigures(UTILIZATION_WINDOWS, KILLED_AFTER);
  const run = randomUUID().slice(0, 8);
  const keys = Array.from({ length: KEYS }, (_, i) => `user-${i}`);

  const spec: QuotaSpec = {
    name: `bench-${run}`,
    scope: 'cluster',
    limits: [
      { name: 'r', unit: 'requests', limit: HUGE, windowMs: 1000, algorithm: 'token_bucket' },
    ],
  };
  const pool = new RedisPool([REDIS_URL]);
  if (!(await pool.whenReady(10_000))) throw new Error(`Redis at ${REDIS_URL} is not reachable`);
  const scope = new ClusterScope(
    pool,
    () => {
      throw new Error('Redis failed during the benchmark');
    },
    'b.',
  );
  scope.apply(scope.plan([spec]));
  const entry = scope.get(spec.name)!;
  const inputs: NormalisedAcquire[] = keys.map((key) => ({
    key,
    quota: spec.name,
    cost: { requests: 1 },
  }));
  const ours = (i: number): Promise<unknown> =>
    Promise.resolve(scope.acquire(entry, inputs[i % KEYS]!));

  const raw = new Redis(REDIS_URL, { enableAutoPipelining: true });
  const sha = (await raw.script('LOAD', RAW_TOKEN_BUCKET)) as string;
  const rawKeys = keys.map((k) => `rawtb:${run}:${k}`);
  const rawCall = (i: number): Promise<unknown> =>
    raw.evalsha(sha, 1, rawKeys[i % KEYS]!, HUGE, HUGE, 1);

  const flexibleRedis = new Redis(REDIS_URL, { enableAutoPipelining: true });
  const flexible = new RateLimiterRedis({
    storeClient: flexibleRedis,
    keyPrefix: `rlf-${run}`,
    points: HUGE,
    duration: 1,
  });
  const flexibleCall = (i: number): Promise<unknown> =>
    flexible.consume(keys[i % KEYS]!).catch((refused: unknown) => refused);

  const peers: [string, (i: number) => Promise<unknown>][] = [
    ['cluster scope (ClusterScope.acquire)', ours],
    ['raw EVALSHA token bucket', rawCall],
    ["rate-limiter-flexible's RateLimiterRedis", flexibleCall],
  ];
  // Warm up: every key once on each side, scripts loaded, JIT warm.
  for (const [, call] of peers) await closedLoop(call, QUICK ? 0.3 : 1.5);
  const rates = peers.map((): number[] => []);
  const redisUs = peers.map((): number[] => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, [, call]] of peers.entries()) {
      await raw.config('RESETSTAT');
      const rate = await closedLoop(call, SECONDS);
      rates[i]!.push(rate);
      redisUs[i]!.push((await scriptMicros(raw)) / (rate * SECONDS));
    }
  }
  const [mine, rawRate, flexibleRate] = rates.map(median) as [number, number, number];
  const [mineUs, rawUs, flexibleUs] = redisUs.map(median) as [number, number, number];
  if (compileQuota(spec).limits.length !== 1) throw new Error('quota misconfigured');

  console.log(
    `node ${process.version}; Redis at ${REDIS_URL}; ${IN_FLIGHT} calls in flight on one connection each; ${KEYS} keys; median of ${ROUNDS} rounds of ${SECONDS}s`,
  );
  console.log('');
  const us = (v: number): string => v.toFixed(1);
  console.log('| path | decisions/s | Redis script µs per decision | cluster scope vs it | goal |');
  console.log('|---|---:|---:|---:|---|');
  console.log(`| cluster scope (ClusterScope.acquire) | ${fmt(mine)} | ${us(mineUs)} | | |`);
  console.log(
    `| raw EVALSHA token bucket | ${fmt(rawRate)} | ${us(rawUs)} | ${(mine / rawRate).toFixed(2)}x | >= 0.9x |`,
  );
  console.log(
    `| rate-limiter-flexible RateLimiterRedis | ${fmt(flexibleRate)} | ${us(flexibleUs)} | ${(mine / flexibleRate).toFixed(2)}x | >= 1.5x |`,
  );
  await memoryPerKey(raw, run);
  await Promise.all([scope.close(), flexibleRedis.quit()]);
  await leaseFigures(raw, sha, run);
  await stranded(run);
  await raw.quit();
  await utilizationFigures(UTILIZATION_WINDOWS, KILLED_AFTER);
}

interface LeaseFigure {
  readonly ours: number;
  readonly raw: number;
  readonly oursCalls: number;
  readonly rawCalls: number;
  readonly leasedShare: number;
}

/**
 * (c) and (d): a ClusterScope with leases vs the raw EVALSHA token bucket, on one hot key and on
 * Zipf keys, both with a huge token bucket; median of ROUNDS rounds, the two alternating.
 */
async function leaseFigures(raw: Redis, sha: string, run: string): Promise<void> {
  const pool = new RedisPool([REDIS_URL]);
  if (!(await pool.whenReady(10_000))) throw new Error(`Redis at ${REDIS_URL} is not reachable`);
  const scope = new ClusterScope(
    pool,
    () => {
      throw new Error('Redis failed during the benchmark');
    },
    'bl.',
    { ...DEFAULT_LEASE_SETTINGS, replicas: 1 },
  );
  const huge = (name: string): QuotaSpec => ({
    name,
    scope: 'cluster',
    limits: [
      { name: 'r', unit: 'requests', limit: HUGE, windowMs: 1000, algorithm: 'token_bucket' },
    ],
  });
  const hot = huge(`lease-hot-${run}`);
  const zipf = huge(`lease-zipf-${run}`);
  scope.apply(scope.plan([hot, zipf]));
  const hotEntry = scope.get(hot.name)!;
  const zipfEntry = scope.get(zipf.name)!;
  const hotInput: NormalisedAcquire = { key: 'hot', quota: hot.name, cost: { requests: 1 } };
  const rawHot = `rawhot:${run}`;

  const draws = zipfDraws(ZIPF_KEYS, ZIPF_S, ZIPF_DRAWS, 0x5eed);
  const mask = ZIPF_DRAWS - 1;
  const zipfInputs: NormalisedAcquire[] = Array.from({ length: ZIPF_KEYS }, (_, r) => ({
    key: `z-${r}`,
    quota: zipf.name,
    cost: { requests: 1 },
  }));
  const rawZipf = Array.from({ length: ZIPF_KEYS }, (_, r) => `rawz:${run}:${r}`);

  const leased = (): number => {
    const k = scope.leases!.counters;
    return k.admitted + k.refused;
  };
  let leaseKeys = 0;
  const figure = async (
    ours: (i: number) => unknown,
    theirs: (i: number) => Promise<unknown>,
  ): Promise<LeaseFigure> => {
    await syncAwareLoop(ours, QUICK ? 0.3 : 1.5);
    await closedLoop(theirs, QUICK ? 0.3 : 1.5);
    const o: number[] = [];
    const t: number[] = [];
    const oc: number[] = [];
    const tc: number[] = [];
    const share: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await raw.config('RESETSTAT');
      const before = leased();
      const mine = await syncAwareLoop(ours, SECONDS);
      leaseKeys = scope.leases!.keys;
      oc.push((await scriptCalls(raw)) / mine.done);
      share.push((leased() - before) / mine.done);
      o.push(mine.rate);
      await raw.config('RESETSTAT');
      const rate = await closedLoop(theirs, SECONDS);
      tc.push((await scriptCalls(raw)) / (rate * SECONDS));
      t.push(rate);
    }
    return {
      ours: median(o),
      raw: median(t),
      oursCalls: median(oc),
      rawCalls: median(tc),
      leasedShare: median(share),
    };
  };

  const c = await figure(
    () => scope.acquire(hotEntry, hotInput),
    () => raw.evalsha(sha, 1, rawHot, HUGE, HUGE, 1),
  );
  const d = await figure(
    (i) => scope.acquire(zipfEntry, zipfInputs[draws[i & mask]!]!),
    (i) => raw.evalsha(sha, 1, rawZipf[draws[i & mask]!]!, HUGE, HUGE, 1),
  );
  await scope.close();

  const lease = DEFAULT_LEASE_SETTINGS;
  const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
  const calls = (v: number): string => (v < 0.01 ? v.toExponential(1) : v.toFixed(3));
  console.log('');
  console.log(
    `Capacity leases (LEASE_HOT_RATE ${lease.hotRate}, HORIZON ${lease.horizonMs} ms, TTL ${lease.ttlMs} ms, IDLE ${lease.idleMs} ms, MAX_KEYS ${lease.maxKeys}; one replica), token bucket of ${fmt(HUGE)}/s, ${IN_FLIGHT} calls outstanding each, median of ${ROUNDS} rounds of ${SECONDS}s, alternating.`,
  );
  console.log(
    `Zipf keys: ${fmt(ZIPF_KEYS)} keys, s = ${ZIPF_S}, ${fmt(ZIPF_DRAWS)} draws (seeded); the top key ${pct(topShare(draws, 1))} of them, the top 100 ${pct(topShare(draws, 100))}; ${fmt(leaseKeys)} keys held slices at the end of its last round.`,
  );
  console.log('');
  console.log(
    '| figure | leased ClusterScope, decisions/s | raw EVALSHA, decisions/s | ratio | goal | script calls per decision (leased / raw) | decisions from slices |',
  );
  console.log('|---|---:|---:|---:|---|---:|---:|');
  const row = (label: string, f: LeaseFigure, goal: string): void =>
    console.log(
      `| ${label} | ${fmt(f.ours)} | ${fmt(f.raw)} | ${(f.ours / f.raw).toFixed(1)}x | ${goal} | ${calls(f.oursCalls)} / ${calls(f.rawCalls)} | ${pct(f.leasedShare)} |`,
    );
  row('(c) one hot key', c, '>= 10x');
  row(`(d) ${fmt(ZIPF_KEYS)} keys, Zipf s = ${ZIPF_S}`, d, '>= 2x');
  await bookOnTheLoop();
}

/**
 * What the lease book does on the event loop that grows with keys, at its bound: a sweep over
 * LEASE_MAX_KEYS slices (every LEASE_IDLE_MS / 2, at most 100 ms) and a halving of the hot-key
 * counters (every 250 ms). The grants come from an in-memory store: only the book's CPU is timed.
 */
async function bookOnTheLoop(): Promise<void> {
  const lease = DEFAULT_LEASE_SETTINGS;
  let now = 0;
  const spec: QuotaSpec = {
    name: 'loop',
    scope: 'cluster',
    limits: [
      { name: 'r', unit: 'requests', limit: HUGE, windowMs: 1000, algorithm: 'fixed_window' },
    ],
  };
  const entry = { name: 'loop', limits: compileQuota(spec).limits, spec, leasable: true };
  const grant: LeaseGrant = {
    outcome: {
      allowed: true,
      code: 'OK',
      now: 0,
      retryAfterMs: 0,
      refusing: -1,
      seq: 1,
      replayed: false,
      inFlight: 0,
      approved: 0,
      denied: 0,
      limits: [{ used: 0, resetMs: 1000 }],
    },
    granted: [100],
    until: [1000],
    notes: [],
  };
  const store = {
    lease: () => Promise.resolve(grant),
    settle: () => Promise.resolve(grant.outcome),
  };
  const book = new LeaseBook(
    { ...lease, hotRate: 1 },
    'b.',
    3,
    { storeFor: () => store, now: () => now, failed: () => never(), again: () => never() },
    false,
  );
  for (let k = 0; k < lease.maxKeys; k++)
    void book.admit(entry, { key: `k${k}`, cost: { requests: 1 } }, `r${k}`);
  await new Promise((resolve) => setImmediate(resolve)); // every grant in place
  const sweeps: number[] = [];
  for (let i = 0; i < 50; i++) {
    now += 1; // nothing idle yet: the sweep walks every slice and sends nothing
    const t0 = performance.now();
    book.sweep();
    sweeps.push(performance.now() - t0);
  }
  const hot = new HotKeys(lease.hotRate, 0);
  const halvings: number[] = [];
  for (let i = 1; i <= 50; i++) {
    const t0 = performance.now();
    hot.touch(i, i * HOT_PERIOD_MS);
    halvings.push(performance.now() - t0);
  }
  console.log('');
  console.log(
    `The lease book on the event loop, at LEASE_MAX_KEYS (${fmt(book.keys)} leased keys): a sweep takes ${median(sweeps).toFixed(2)} ms (max ${Math.max(...sweeps).toFixed(2)} ms, every ${Math.min(100, lease.idleMs / 2)} ms); halving the ${fmt(65_536)} hot-key counters ${(median(halvings) * 1000).toFixed(0)} µs (max ${(Math.max(...halvings) * 1000).toFixed(0)} µs, every ${HOT_PERIOD_MS} ms).`,
  );
}

function never(): never {
  throw new Error('the in-memory store never fails');
}

/** Stranded capacity under steady overload, three replicas (bench/cluster/stranded.ts). */
async function stranded(run: string): Promise<void> {
  const leased = await strandedRun(REDIS_URL, run, STRANDED_WINDOWS, true);
  const redis = await strandedRun(REDIS_URL, run, STRANDED_WINDOWS, false);
  console.log('');
  console.log(
    `Stranded capacity: three ClusterScopes (three RedisPools, LEASE defaults) in one process, one key per algorithm, each replica offering the limit per second (3x overload), ${STRANDED_WINDOWS} windows of 1 s after the first; ${(leased.leasedShare * 100).toFixed(1)}% of decisions made from slices. Peer: the same run without leases (a Redis call per decision).`,
  );
  console.log('');
  console.log(
    '| algorithm, limit | offered per window | admitted / limit, min | admitted / limit, median | stranded (1 - admitted / limit, all windows) | without leases: min, median, stranded |',
  );
  console.log('|---|---:|---:|---:|---:|---|');
  const ratio = (v: number): string => v.toFixed(3);
  const strandedOf = (ratios: number[]): string =>
    ratio(1 - ratios.reduce((a, b) => a + b, 0) / ratios.length);
  for (const [i, r] of leased.rows.entries()) {
    const p = redis.rows[i]!.ratios;
    console.log(
      `| ${r.label} | ${fmt(r.offered)} | ${ratio(Math.min(...r.ratios))} | ${ratio(median(r.ratios))} | ${strandedOf(r.ratios)} | ${ratio(Math.min(...p))}, ${ratio(median(p))}, ${strandedOf(p)} |`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
