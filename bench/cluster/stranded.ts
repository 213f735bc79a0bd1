/**
 * Stranded capacity of leases: three ClusterScopes in one process (three replicas, each on its own
 * RedisPool, LEASE defaults), a steady 3x overload on one key per algorithm (each replica offers
 * the limit per second, evenly spread), run over `windows` windows of 1 s after a first second in
 * which the key turns hot (left out). Admissions are binned by the epoch second in which each was
 * decided: a slice is only spent before its grant's deadline, so a fixed window's admissions fall
 * in its own bin. Stranded: the share of the limit nobody admitted although demand was there
 * (units left in slices, sliding-log units dated ahead, token-bucket units held). The same run
 * without leases (one Redis call a decision) is the peer: what the algorithm itself leaves.
 */
import type { NormalisedAcquire } from '@app/contracts';
import type { Decision, QuotaSpec } from '@app/engine';
import { ClusterScope } from '../../apps/limiter/src/cluster/cluster-scope';
import { RedisPool } from '../../apps/limiter/src/cluster/redis-pool';
import { DEFAULT_LEASE_SETTINGS } from '../../apps/limiter/src/settings/limiter-settings';

const REPLICAS = 3;
const TICK_MS = 5;

type Limit = QuotaSpec['limits'][number];

/** One key per algorithm; a sliding window of 300 keeps sub-buckets, one of 50 an exact log. */
const CASES: [string, Limit][] = [
  ['fixed window, 300 / 1 s', limit(300, 'fixed_window')],
  // At the default precision (10 sub-buckets) the oldest sub-bucket counts whole, so a steady
  // overload admits about 300 per 1.1 s, leases or not; at precision 100, about 300 per 1.01 s.
  ['sliding window (sub-buckets, precision 10), 300 / 1 s', limit(300, 'sliding_window')],
  [
    'sliding window (sub-buckets, precision 100), 300 / 1 s',
    { ...limit(300, 'sliding_window'), precision: 100 },
  ],
  ['sliding window (log), 50 / 1 s', limit(50, 'sliding_window')],
  ['token bucket, 300/s', limit(300, 'token_bucket')],
];

function limit(n: number, algorithm: Limit['algorithm']): Limit {
  return { name: 'r', unit: 'requests', limit: n, windowMs: 1000, algorithm };
}

export interface StrandedRow {
  readonly label: string;
  readonly limit: number;
  /** Requests offered per window, all replicas together. */
  readonly offered: number;
  /** admitted / limit per window. */
  readonly ratios: number[];
}

export interface StrandedRun {
  readonly rows: StrandedRow[];
  /** Share of all decisions made from slices (lease counters of the three replicas). */
  readonly leasedShare: number;
}

/** `leases` false: the same three replicas deciding every request in Redis. */
export async function strandedRun(
  redisUrl: string,
  run: string,
  windows: number,
  leases: boolean,
): Promise<StrandedRun> {
  const specs: QuotaSpec[] = CASES.map(([, l], i) => ({
    name: `stranded-${run}-${leases ? 'leased' : 'redis'}-${i}`,
    scope: 'cluster',
    limits: [l],
  }));
  const pools = Array.from({ length: REPLICAS }, () => new RedisPool([redisUrl]));
  const scopes = pools.map(
    (pool, r) =>
      new ClusterScope(
        pool,
        () => {
          throw new Error('Redis failed during the benchmark');
        },
        `s${r}.`,
        leases ? { ...DEFAULT_LEASE_SETTINGS, replicas: REPLICAS } : undefined,
      ),
  );
  try {
    for (const pool of pools) {
      if (!(await pool.whenReady(10_000))) throw new Error(`Redis at ${redisUrl} is not reachable`);
    }
    for (const scope of scopes) scope.apply(scope.plan(specs));
    const entries = scopes.map((scope) => specs.map((s) => scope.get(s.name)!));
    const inputs: NormalisedAcquire[] = specs.map((s) => ({
      key: 'hot',
      quota: s.name,
      cost: { requests: 1 },
    }));
    const bins = windows + 1;
    const admitted = specs.map(() => new Array<number>(bins).fill(0));
    const sent = scopes.map(() => specs.map(() => 0));
    let decisions = 0;
    // Starts on a second boundary, so that bins are fixed windows.
    const t0 = Math.ceil((Date.now() + 50) / 1000) * 1000;
    await new Promise((resolve) => setTimeout(resolve, t0 - Date.now()));
    const count = (c: number, d: Decision): void => {
      decisions++;
      if (!d.allowed) return;
      const bin = Math.floor((Date.now() - t0) / 1000);
      if (bin >= 0 && bin < bins) admitted[c]![bin]!++;
    };
    const pending: Promise<void>[] = [];
    await new Promise<void>((resolve) => {
      const tick = (): void => {
        const now = Date.now();
        if (now >= t0 + bins * 1000) return resolve();
        for (const [c, [, l]] of CASES.entries()) {
          for (const [r, scope] of scopes.entries()) {
            // Each replica offers the limit per second, the three a third of a request apart.
            const due = Math.floor(((now - t0) / 1000) * l.limit + r / REPLICAS);
            const mine = sent[r]!;
            while (mine[c]! < due) {
              mine[c]!++;
              const d = scope.acquire(entries[r]![c]!, inputs[c]!);
              if (d instanceof Promise) pending.push(d.then((x) => count(c, x)));
              else count(c, d);
            }
          }
        }
        setTimeout(tick, TICK_MS);
      };
      tick();
    });
    await Promise.all(pending);
    let leased = 0;
    for (const scope of scopes) {
      const k = scope.leases?.counters;
      leased += (k?.admitted ?? 0) + (k?.refused ?? 0);
    }
    return {
      rows: CASES.map(([label, l], c) => ({
        label,
        limit: l.limit,
        offered: REPLICAS * l.limit,
        ratios: admitted[c]!.slice(1).map((a) => a / l.limit),
      })),
      leasedShare: leased / decisions,
    };
  } finally {
    await Promise.all(scopes.map((s) => s.close()));
  }
}
