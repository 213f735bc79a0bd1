/**
 * npm run bench:outage — cluster scope while its Redis hangs (SIGSTOP: the connection stays open,
 * nothing answers), beside the same load on the same Redis while it is healthy, in the same run.
 * ClusterScope.acquire (the store, its batching and ioredis, no transport) on a private
 * redis-server, IN_FLIGHT callers in a closed loop (each sends its next request once the previous
 * one is answered, as a client with a pool of connections does), each pausing 0-2 ms (random)
 * between requests, so that requests reach the store spread over event-loop turns as they do
 * from a transport (callers in lock-step would all ask in one turn, one call per turn). The quota's onStoreFailure is `open`, so an answer
 * the policy gives costs no engine work: what is left is the wait on Redis. Per phase: requests
 * answered, throughput, latency p50/p99/max, event-loop delay p99; then how long after SIGCONT
 * Redis decides again. BENCH_QUICK=1 shortens the phases; BENCH_TIMEOUT_MS sets REDIS_TIMEOUT_MS.
 */
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { NormalisedAcquire } from '@app/contracts';
import type { Decision, QuotaSpec } from '@app/engine';
import { ClusterScope } from '../apps/limiter/src/cluster/cluster-scope';
import { RedisPool } from '../apps/limiter/src/cluster/redis-pool';
import { storeFailureAnswer } from '../apps/limiter/src/cluster/store-failure';
import { privateRedis } from '../test/support/redis-process';

const QUICK = process.env.BENCH_QUICK === '1';
const HEALTHY_S = QUICK ? 1 : 3;
const OUTAGE_S = QUICK ? 2 : 5;
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 64);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 500);
const KEYS = 1_000;
const POLICY_REASON = /onStoreFailure/;

const pause = (): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 3)));

interface Phase {
  readonly name: string;
  readonly ms: number[];
  readonly byPolicy: number;
  readonly seconds: number;
  readonly loopP99Ms: number;
}

/** IN_FLIGHT callers for `seconds`: every answer's latency, and how many the policy gave. */
async function closedLoop(
  name: string,
  call: (i: number) => Promise<Decision>,
  seconds: number,
): Promise<Phase> {
  const ms: number[] = [];
  let byPolicy = 0;
  let next = 0;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const start = performance.now();
  const end = start + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const asked = performance.now();
      const d = await call(next++);
      ms.push(performance.now() - asked);
      if (POLICY_REASON.test(d.reason ?? '')) byPolicy++;
      await pause();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  loop.disable();
  const elapsed = (performance.now() - start) / 1000;
  return { name, ms, byPolicy, seconds: elapsed, loopP99Ms: loop.percentile(99) / 1e6 };
}

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function row(p: Phase): string {
  const sorted = [...p.ms].sort((a, b) => a - b);
  const f = (n: number): string =>
    n < 1 ? n.toFixed(3) : n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString('en-US');
  const rate = Math.round(p.ms.length / p.seconds).toLocaleString('en-US');
  return (
    `| ${p.name} | ${p.ms.length.toLocaleString('en-US')} | ${rate} | ${f(pct(sorted, 50))} | ` +
    `${f(pct(sorted, 99))} | ${f(sorted[sorted.length - 1]!)} | ${p.byPolicy.toLocaleString('en-US')} | ${f(p.loopP99Ms)} |`
  );
}

async function main(): Promise<void> {
  const redis = await privateRedis();
  const spec: QuotaSpec = {
    name: `outage-${randomUUID().slice(0, 8)}`,
    scope: 'cluster',
    onStoreFailure: 'open',
    limits: [
      { name: 'r', unit: 'requests', limit: 1e9, windowMs: 1000, algorithm: 'token_bucket' },
    ],
  };
  const pool = new RedisPool([redis.url], false, TIMEOUT_MS);
  try {
    if (!(await pool.whenReady(10_000))) throw new Error('the private Redis is not reachable');
    const never = (): never => {
      throw new Error('onStoreFailure: open never asks the engine');
    };
    const scope = new ClusterScope(pool, storeFailureAnswer(never), 'b.');
    scope.apply(scope.plan([spec]));
    const entry = scope.get(spec.name)!;
    const inputs: NormalisedAcquire[] = Array.from({ length: KEYS }, (_, i) => ({
      key: `user-${i}`,
      quota: spec.name,
      cost: { requests: 1 },
    }));
    const call = (i: number): Promise<Decision> =>
      Promise.resolve(scope.acquire(entry, inputs[i % KEYS]!));

    await closedLoop('warm-up', call, 1); // scripts loaded, JIT warm
    const healthy = await closedLoop('Redis healthy', call, HEALTHY_S);
    redis.pause();
    let hung: Phase;
    try {
      hung = await closedLoop(`Redis hung (SIGSTOP), ${OUTAGE_S} s`, call, OUTAGE_S);
    } finally {
      redis.resume();
    }
    // Back: how long until Redis decides a request again (not the policy).
    const resumed = performance.now();
    let backMs = NaN;
    while (performance.now() - resumed < 30_000) {
      const d = await call(0);
      if (!POLICY_REASON.test(d.reason ?? '')) {
        backMs = performance.now() - resumed;
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }

    console.log(
      `node ${process.version}; private redis-server; REDIS_TIMEOUT_MS=${TIMEOUT_MS}; ${IN_FLIGHT} callers in a closed loop, 0-2 ms between requests; onStoreFailure: open`,
    );
    console.log('');
    console.log(
      '| phase | requests | per second | p50 ms | p99 ms | max ms | answered by the policy | event-loop delay p99 ms |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    console.log(row(healthy));
    console.log(row(hung));
    console.log('');
    const ratio = hung.ms.length / hung.seconds / (healthy.ms.length / healthy.seconds);
    console.log(`throughput while hung / healthy: ${ratio.toFixed(ratio < 0.1 ? 3 : 2)}x`);
    console.log(`Redis decides again ${Math.round(backMs)} ms after SIGCONT`);
    await scope.close();
  } finally {
    await redis.kill();
    await pool.close().catch(() => undefined);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
