/**
 * Utilization of capacity leases end to end: three limiter processes (from sources, LEASE
 * defaults) on one private redis-server and the local NATS, a steady overload of one key per
 * algorithm from every replica over HTTP and NATS (18 + 18 workers in this process, paced for 4x
 * the limit), over whole windows of 1 s after the first (in which the key turns hot). Per whole
 * window overloaded (offered at least 1.5x the limit): admitted / limit, each admission counted at
 * the middle of its [sent, answered] interval; min and median. Beside it the most admitted
 * (certainly inside) in one window, in any span of one for a sliding window, or against its own
 * bound for a token bucket, as a share of the limit: above 1 would be over the limit. The peer:
 * three more limiters with LEASE_HOT_RATE=0 (a Redis call per decision, exact by construction)
 * under the same load, alternating with the leased ones algorithm by algorithm. Last, a replica
 * SIGKILLed mid-window in each group (fixed 300 / 2 s, HTTP only): what the two survivors admit in
 * the windows after it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { connect, type NatsConnection } from 'nats';
import {
  clock,
  intoWindow,
  mostWithinSpan,
  redisOffset,
  startLoad,
  targetsFor,
  type Sample,
  type Target,
  type Transports,
} from '../../test/support/cluster-load';
import {
  admitted,
  bucketBound,
  family,
  perWindow,
  windowStart,
} from '../../test/support/cluster-windows';
import { configFile, sleep, waitReady, type Json } from '../../test/support/limiter-http';
import {
  startLimiter,
  uniquePrefix,
  type LimiterProcess,
} from '../../test/support/limiter-process';
import { privateRedis } from '../../test/support/redis-process';

const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
const REPLICAS = 3;
const DEADLINE_MS = 10_000;
const WINDOW_MS = 1_000;
const KILL_WINDOW_MS = 2_000;
const KILL_LIMIT = 300;
/**
 * A whole window counts when it was offered at least this times its limit: the load is paced for
 * 4x, but a loaded machine slows the workers (each waits for its answer), and a window offered
 * less than its limit cannot be filled whatever the limiter does.
 */
const OVERLOAD = 1.5;
/**
 * Workers per replica and transport (the lease test had 3). Each waits for its answer, so on a
 * loaded machine the offered load is workers / latency: twice the test's, for windows that count.
 */
const COPIES = 6;

interface Case {
  readonly label: string;
  readonly kind: 'fixed' | 'sliding' | 'bucket';
  readonly limit: Json;
}

const requests = (limit: number, algorithm: string, windowMs = WINDOW_MS): Json => ({
  name: 'r',
  unit: 'requests',
  limit,
  windowMs,
  algorithm,
});

const CASES: Case[] = [
  { label: 'fixed window, 300 / 1 s', kind: 'fixed', limit: requests(300, 'fixed_window') },
  {
    // At the default precision 10 the oldest sub-bucket counts whole: about 300 per 1.1 s in a
    // steady overload, leased or not (stranded capacity, above).
    label: 'sliding window (sub-buckets, precision 100), 300 / 1 s',
    kind: 'sliding',
    limit: { ...requests(300, 'sliding_window'), precision: 100 },
  },
  {
    label: 'sliding window (log), 50 / 1 s',
    kind: 'sliding',
    limit: requests(50, 'sliding_window'),
  },
  { label: 'token bucket, 300/s', kind: 'bucket', limit: requests(300, 'token_bucket') },
];

const quotaName = (i: number): string => `util-${i}`;
const KILL_QUOTA = 'util-kill';

/** Three limiters sharing a subject prefix and a queue group. */
interface Group {
  readonly name: string;
  readonly limiters: LimiterProcess[];
  readonly io: Transports;
}

interface Figure {
  /** Requests offered per whole window, median. */
  readonly offered: number;
  /** admitted / limit of each whole window offered at least OVERLOAD x the limit. */
  readonly ratios: number[];
  readonly windows: number;
  /** The most admitted in a window (or against a bucket's bound), over the limit (or bound). */
  readonly most: number;
  /** Share of the answers decided from slices. */
  readonly sliced: number;
  readonly unanswered: number;
}

const median = (v: readonly number[]): number =>
  v.length === 0 ? NaN : [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const least = (v: readonly number[]): number => (v.length === 0 ? NaN : Math.min(...v));
const ratio = (v: number): string => (Number.isNaN(v) ? '–' : v.toFixed(3));

export async function utilizationFigures(windows: number, killWindows: number): Promise<void> {
  const run = randomUUID().slice(0, 8);
  const dir = mkdtempSync(join(tmpdir(), 'bench-utilization-'));
  const redis = await privateRedis();
  const all: LimiterProcess[] = [];
  let nc: NatsConnection | undefined;
  let admin: Redis | undefined;
  // Interrupted (Ctrl-C, a test's timeout): the limiters and redis-server go with this process.
  const interrupted = (): void => {
    for (const l of all) l.child.kill('SIGKILL');
    void redis.kill().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  try {
    const config = configFile(dir, [
      ...CASES.map((c, i) => cluster(quotaName(i), c.limit)),
      cluster(KILL_QUOTA, requests(KILL_LIMIT, 'fixed_window', KILL_WINDOW_MS)),
    ]);
    nc = await connect({ servers: NATS_URL });
    const env = (name: string, lease: Record<string, string>): Record<string, string> => ({
      NATS_URL,
      NATS_SUBJECT_PREFIX: `${uniquePrefix()}.${name}`,
      NATS_QUEUE_GROUP: `q-${name}-${run}`,
      REDIS_URL: redis.url,
      REDIS_TIMEOUT_MS: '5000',
      LIMITER_REPLICAS: String(REPLICAS),
      CONFIG_FILE: config,
      ...lease,
    });
    const specs = [
      { name: 'leased', env: env('leased', {}) },
      { name: 'lease off', env: env('off', { LEASE_HOT_RATE: '0' }) },
    ];
    const started = await Promise.allSettled(
      specs.flatMap((s, g) =>
        Array.from({ length: REPLICAS }, async (_, i) => {
          const limiter = await startLimiter(
            { ...s.env, DATA_DIR: join(dir, `data-${g}-${i}`) },
            180_000,
          );
          all.push(limiter);
          return limiter;
        }),
      ),
    );
    const failed = started.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const ready = started.map((s) => (s as PromiseFulfilledResult<LimiterProcess>).value);
    await Promise.all(ready.map((l) => waitReady(l)));
    const groups: Group[] = specs.map((s, g) => {
      const limiters = ready.slice(g * REPLICAS, (g + 1) * REPLICAS);
      const subject = `${s.env['NATS_SUBJECT_PREFIX']}.acquire`;
      return { name: s.name, limiters, io: { urls: limiters.map((l) => l.url), nc: nc!, subject } };
    });
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const offset = await redisOffset(admin);

    const rows: [Case, Figure, Figure][] = [];
    for (const [i, c] of CASES.entries()) {
      // Alternating which group goes first, so that neither always follows the other.
      const order = i % 2 === 0 ? groups : [...groups].reverse();
      const figures = new Map<Group, Figure>();
      for (const g of order) {
        figures.set(
          g,
          await steadyOverload(g, c, i, `${run}-${g.limiters[0]!.port}`, offset, windows),
        );
      }
      rows.push([c, figures.get(groups[0]!)!, figures.get(groups[1]!)!]);
    }
    printSteady(rows, windows);
    const kills = [];
    for (const g of groups)
      kills.push(await replicaKilled(g, `${run}-${g.name}`, offset, killWindows));
    printKills(groups, kills, killWindows);
  } finally {
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
    await nc?.close();
    admin?.disconnect();
    await Promise.allSettled(all.map((l) => l.stop()));
    await redis.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

function cluster(name: string, limit: Json): Json {
  // `closed`: a store failure shows up as a 503, never as a local decision.
  return { name, scope: 'cluster', onStoreFailure: 'closed', limits: [limit] };
}

async function leaseDecisions(g: Group): Promise<number> {
  let sum = 0;
  for (const l of g.limiters) sum += await family(l, 'ratelimit_lease_decisions_total');
  return sum;
}

/** One key of case `i` under a steady overload for `windows` whole windows after the first. */
async function steadyOverload(
  g: Group,
  c: Case,
  i: number,
  key: string,
  offset: number,
  windows: number,
): Promise<Figure> {
  const redisNow = (): number => clock() + offset;
  const limit = Number(c.limit['limit']);
  const targets = targetsFor(REPLICAS, COPIES);
  const pause = (targets.length * WINDOW_MS) / (4 * limit);
  await intoWindow(redisNow, WINDOW_MS, 50, 150);
  const first = windowStart(redisNow(), WINDOW_MS);
  const end = first + (windows + 1) * WINDOW_MS;
  const before = await leaseDecisions(g);
  const stream = startLoad(g.io, targets, () => ({ key, quota: quotaName(i) }), {
    timeoutMs: DEADLINE_MS,
    pauseMs: () => Math.random() * 2 * pause,
  });
  await sleep(end + 100 - redisNow());
  const samples = await stream.stop();
  const sliced = (await leaseDecisions(g)) - before;
  const whole = perWindow(samples, offset, WINDOW_MS, first + WINDOW_MS, end);
  const answered = samples.filter((s) => s.reply !== undefined).length;
  return {
    offered: median(whole.map((w) => w.offered)),
    ratios: whole.filter((w) => w.offered >= OVERLOAD * limit).map((w) => w.midway / limit),
    windows: whole.length,
    most: mostOf(c.kind, samples, offset, limit, first, end),
    sliced: answered === 0 ? 0 : sliced / answered,
    unanswered: samples.length - answered,
  };
}

/** The never-over figure: the most admitted against what the algorithm allows (at most 1). */
function mostOf(
  kind: Case['kind'],
  samples: readonly Sample[],
  offset: number,
  limit: number,
  first: number,
  end: number,
): number {
  if (kind === 'sliding') return mostWithinSpan(admitted(samples), WINDOW_MS - 1).count / limit;
  if (kind === 'fixed') {
    return (
      Math.max(...perWindow(samples, offset, WINDOW_MS, first, end).map((w) => w.certain)) / limit
    );
  }
  const ends: number[] = [];
  for (let until = first + WINDOW_MS; until <= end; until += WINDOW_MS) ends.push(until);
  return Math.max(
    ...bucketBound(samples, offset, limit, WINDOW_MS, ends).map((b) => b.admitted / b.most),
  );
}

interface KillFigure {
  /** admitted / limit in the window of the kill, then in each whole window after it. */
  readonly ratios: number[];
  /** The fewest requests offered in one of those windows. */
  readonly offered: number;
  readonly most: number;
}

/** HTTP only, 3 workers per replica paced for 3x; replica 1 SIGKILLed mid second window. */
async function replicaKilled(
  g: Group,
  key: string,
  offset: number,
  after: number,
): Promise<KillFigure> {
  const redisNow = (): number => clock() + offset;
  const targets: Target[] = [0, 1, 2, 0, 1, 2, 0, 1, 2].map((replica) => ({
    via: 'http',
    replica,
  }));
  const pause = (targets.length * KILL_WINDOW_MS) / (3 * KILL_LIMIT);
  await intoWindow(redisNow, KILL_WINDOW_MS, 50, 150);
  const first = windowStart(redisNow(), KILL_WINDOW_MS);
  const end = first + (2 + after) * KILL_WINDOW_MS;
  const stream = startLoad(g.io, targets, () => ({ key, quota: KILL_QUOTA }), {
    timeoutMs: DEADLINE_MS,
    pauseMs: () => Math.random() * 2 * pause,
  });
  await sleep(first + 1.5 * KILL_WINDOW_MS - redisNow());
  await g.limiters[1]!.stop('SIGKILL');
  await sleep(end + 100 - redisNow());
  const samples = await stream.stop();
  const windows = perWindow(samples, offset, KILL_WINDOW_MS, first, end);
  return {
    ratios: windows.slice(1).map((w) => w.midway / KILL_LIMIT),
    offered: Math.min(...windows.slice(1).map((w) => w.offered)),
    most: Math.max(...windows.map((w) => w.certain)) / KILL_LIMIT,
  };
}

function printSteady(rows: [Case, Figure, Figure][], windows: number): void {
  const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
  console.log('');
  console.log(
    `Utilization end to end: three limiter processes per group on one private redis-server, one key per algorithm, ${REPLICAS * COPIES} HTTP + ${REPLICAS * COPIES} NATS workers paced for 4x the limit, ${windows} whole windows of 1 s after the first; counted in those offered at least ${OVERLOAD}x the limit (counted / whole). Leased: LEASE defaults; lease off: LEASE_HOT_RATE=0, a Redis call per decision. Most in a window: certainly admitted in one window (sliding: any span of one; token bucket: against burst + rate x elapsed) over the limit; above 1.000 would be over it.`,
  );
  console.log('');
  console.log(
    '| algorithm, limit | offered per window | leased: admitted / limit, min | median | lease off: min | median | leased / lease off (median) | counted / whole windows (leased, off) | most in a window / limit (leased, off) | decisions from slices | unanswered (leased, off) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|');
  for (const [c, leased, off] of rows) {
    const l = median(leased.ratios);
    const o = median(off.ratios);
    console.log(
      `| ${c.label} | ${Math.round(leased.offered)}, ${Math.round(off.offered)} | ${ratio(least(leased.ratios))} | ${ratio(l)} | ${ratio(least(off.ratios))} | ${ratio(o)} | ${ratio(l / o)} | ${leased.ratios.length}/${leased.windows}, ${off.ratios.length}/${off.windows} | ${ratio(leased.most)}, ${ratio(off.most)} | ${pct(leased.sliced)} | ${leased.unanswered}, ${off.unanswered} |`,
    );
  }
}

function printKills(groups: readonly Group[], kills: readonly KillFigure[], after: number): void {
  console.log('');
  console.log(
    `A replica SIGKILLed mid-window: fixed window ${KILL_LIMIT} / 2 s, 9 HTTP workers (3 per replica) paced for 3x, replica 1 killed 1 s into the second window; admitted / limit in that window and the ${after} whole windows after it (the two survivors alone), and the most certainly admitted in a window over the limit.`,
  );
  console.log('');
  console.log(
    `| group | offered per window, min | window of the kill | ${Array.from({ length: after }, (_, k) => `window ${k + 1} after`).join(' | ')} | most in a window / limit |`,
  );
  console.log(`|---|---:|---:|${'---:|'.repeat(after)}---:|`);
  for (const [k, g] of groups.entries()) {
    const f = kills[k]!;
    console.log(
      `| ${g.name} | ${f.offered} | ${f.ratios.map(ratio).join(' | ')} | ${ratio(f.most)} |`,
    );
  }
}
