/**
 * Figure (h) of bench:limiter: three limiter processes in one NATS queue group on one Redis, NATS
 * batches of 100 acquires on one hot key, a cluster-scope quota (a huge token bucket: its hot key
 * decided from leased slices) beside the same limits with scope: local, in the same run, peers
 * alternating round by round. The lease metrics of the three limiters give the share of cluster
 * decisions made from slices.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { NatsConnection } from 'nats';
import { closedLoop } from './nats-load';
import { median, rounds } from './rounds';

export const CLUSTER_REPLICAS = 3;

export interface ClusterFigure {
  readonly cluster: number;
  readonly local: number;
  /** Cluster decisions made from slices / cluster decisions answered, all rounds (metrics). */
  readonly leasedShare: number;
}

export interface ClusterRun {
  readonly nc: NatsConnection;
  readonly redisUrl: string;
  readonly batchSize: number;
  readonly batchInFlight: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** Starts a limiter serving `prefix` with `env` added; resolves once it is ready. */
  readonly start: (
    prefix: string,
    dataDir: string,
    env: Record<string, string>,
  ) => Promise<{ url: string; stop(): Promise<number | null>; output(): string }>;
}

const HUGE = 1_000_000_000;

export async function clusterFigure(run: ClusterRun): Promise<ClusterFigure> {
  const dir = mkdtempSync(join(tmpdir(), 'limiter-bench-cluster-'));
  const id = randomUUID().replaceAll('-', '');
  const prefix = `bench.${id}.cluster`;
  const limits = [
    { name: 'r', unit: 'requests', limit: HUGE, windowMs: 1000, algorithm: 'token_bucket' },
  ];
  const quotas = [
    { name: `hot-cluster-${id}`, limits, scope: 'cluster' },
    { name: `hot-local-${id}`, limits, scope: 'local' },
  ];
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ quotas }));
  const group = `bench-${randomUUID()}`;
  const limiters: Awaited<ReturnType<ClusterRun['start']>>[] = [];
  try {
    const started = await Promise.allSettled(
      Array.from({ length: CLUSTER_REPLICAS }, async (_, i) => {
        const limiter = await run.start(prefix, join(dir, `data-${i}`), {
          NATS_QUEUE_GROUP: group,
          REDIS_URL: run.redisUrl,
          CONFIG_FILE: config,
          LIMITER_REPLICAS: String(CLUSTER_REPLICAS),
        });
        limiters.push(limiter);
        return limiter;
      }),
    );
    const failed = started.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    await Promise.all(limiters.map((l) => redisReady(l.url)));
    const batchOf = (quota: string): Buffer[] => [
      Buffer.from(
        JSON.stringify({
          requests: Array.from({ length: run.batchSize }, () => ({ key: 'hot', quota })),
        }),
      ),
    ];
    const [cluster, local] = quotas.map((q) => batchOf(q.name));
    for (const payload of [cluster!, local!]) await allAdmitted(run.nc, prefix, payload[0]!);
    const batch = (payloads: Buffer[], seconds: number): Promise<number> =>
      closedLoop(run.nc, `${prefix}.acquire.batch`, payloads, run.batchInFlight, seconds).then(
        (rate) => rate * run.batchSize,
      );
    await batch(cluster!, run.warmupSeconds);
    await batch(local!, run.warmupSeconds);
    const clusterQuota = quotas[0]!.name;
    const before = await leased(limiters, clusterQuota);
    const [c, l] = (
      await rounds([() => batch(cluster!, run.seconds), () => batch(local!, run.seconds)])
    ).map(median);
    const after = await leased(limiters, clusterQuota);
    for (const limiter of limiters.splice(0)) {
      const code = await limiter.stop();
      if (code !== 0) throw new Error(`limiter exited ${code}:\n${limiter.output()}`);
    }
    const leasedShare = (after.leased - before.leased) / (after.decided - before.decided);
    return { cluster: c!, local: l!, leasedShare };
  } finally {
    for (const limiter of limiters) await limiter.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether Redis answers PING at `url` (within 2 s, no retries). */
export async function redisReachable(url: string): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** A limiter's /readyz says `redis: ready` (cluster scope decided in Redis), within 20 s. */
async function redisReady(url: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const body = (await (await fetch(`${url}/readyz`)).json()) as { redis?: string };
    if (body.redis === 'ready') return;
    if (Date.now() > deadline) throw new Error(`(h): ${url} has no Redis: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One batch through the queue group: every entry admitted (the quota is served as configured). */
async function allAdmitted(nc: NatsConnection, prefix: string, payload: Buffer): Promise<void> {
  const msg = await nc.request(`${prefix}.acquire.batch`, payload, { timeout: 5_000 });
  const text = Buffer.from(msg.data).toString();
  const reply = JSON.parse(text) as { replies?: { allowed?: boolean }[] };
  if (!Array.isArray(reply.replies) || reply.replies.some((r) => r.allowed !== true)) {
    throw new Error(`(h): a batch was not admitted whole: ${text.slice(0, 300)}`);
  }
}

/**
 * The limiters' decisions made from slices (ratelimit_lease_decisions_total) and their answered
 * acquires of `quota` (ratelimit_decisions_total), summed.
 */
async function leased(
  limiters: readonly { url: string }[],
  quota: string,
): Promise<{ leased: number; decided: number }> {
  let lease = 0;
  let decided = 0;
  const mine = `quota="${quota}"`;
  for (const limiter of limiters) {
    const text = await (await fetch(`${limiter.url}/metrics`)).text();
    for (const m of text.matchAll(/^(ratelimit_\w+)\{([^}]*)\} (\d+(?:\.\d+)?)$/gm)) {
      if (m[1] === 'ratelimit_lease_decisions_total') lease += Number(m[3]);
      else if (m[1] === 'ratelimit_decisions_total' && m[2]!.includes(mine))
        decided += Number(m[3]);
    }
  }
  return { leased: lease, decided };
}
