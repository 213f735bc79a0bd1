/**
 * npm run bench:cluster — decisions/s of cluster scope (ClusterScope: the requests of one
 * event-loop turn in one Lua call through ioredis, the reply built as the engine's), beside, in
 * the same run and against the same Redis:
 *   - a raw EVALSHA token bucket (the least a Redis limiter can do per decision), and
 *   - rate-limiter-flexible's RateLimiterRedis (consume, on its own ioredis connection).
 * Every peer gets the same loop: IN_FLIGHT calls outstanding, 10 000 keys round robin, one
 * connection. Median of 3 rounds, peers alternating round by round; Redis's own time in scripts
 * per decision (INFO commandstats) beside each; then Redis's bytes per key of sliding windows in
 * both regimes. Run from sources (swc-node): the work is Redis round trips, not JIT-sensitive
 * code. BENCH_QUICK=1 shortens every run.
 */
import { randomUUID } from 'node:crypto';
import type { NormalisedAcquire } from '@app/contracts';
import { compileQuota, type QuotaSpec } from '@app/engine';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { ClusterScope } from '../apps/limiter/src/cluster/cluster-scope';
import { RedisPool } from '../apps/limiter/src/cluster/redis-pool';
import { RedisQuotaStore } from '../apps/limiter/src/cluster/redis-quota-store';

const QUICK = process.env.BENCH_QUICK === '1';
const SECONDS = QUICK ? 0.5 : 3;
const ROUNDS = 3;
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 64);
const KEYS = 10_000;
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const HUGE = 1_000_000_000;

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
  await Promise.all([scope.close(), raw.quit(), flexibleRedis.quit()]);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
