/**
 * Capacity leases (issue 15) in the cluster scripts' algorithms (apps/limiter/src/cluster/lua/*.lua:
 * leaseUntil, grant, giveBack, expire), in the real Redis with `now` given by each step:
 *
 * - seeded random schedules of three virtual replicas taking grants as the driver sizes them,
 *   spending them at instants before their deadlines, giving back or dying, with plain requests
 *   mixed in (test/support/lease-schedule.lua, one call per schedule): whatever was spent never
 *   exceeds the limit in the algorithm's own sense, and an overloaded schedule still admits close
 *   to the limit (a grant that charged too much would not);
 * - a table of exact instants per algorithm (test/support/algorithm-harness.lua).
 */
import { compileQuota, type LimitSpec } from '@app/engine';
import { Redis } from 'ioredis';
import { join } from 'node:path';
import { script, scriptAlgorithm } from '../apps/limiter/src/cluster/cluster-script';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const ALGORITHMS = ['fixed_window', 'sliding_window', 'token_bucket'];
const RUNNER = script(ALGORITHMS, join(__dirname, 'support', 'lease-schedule.lua'));
const HARNESS = script(ALGORITHMS, join(__dirname, 'support', 'algorithm-harness.lua'));

const T0 = 1_700_000_000_000; // a multiple of 1000
const W = 1000;

interface ScriptLimit {
  readonly algorithm: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly bucketMs: number;
  readonly ringSize: number;
  readonly capacity: number;
  readonly logSize: number;
  readonly logUnits: boolean;
  readonly layout: string;
}

/** The first limit of the quota as the cluster store gives it to the scripts. */
function scriptLimit(limits: readonly LimitSpec[]): ScriptLimit {
  const l = compileQuota({ name: 'q', limits }).limits.find((x) => x.name === limits[0]!.name);
  if (l === undefined) throw new Error(`no limit ${limits[0]!.name}`);
  return {
    algorithm: scriptAlgorithm(l),
    limit: l.limit,
    windowMs: l.windowMs,
    bucketMs: l.bucketMs,
    ringSize: l.ringSize,
    capacity: l.capacity,
    logSize: l.logSize,
    logUnits: l.logUnits,
    layout: l.layoutKey,
  };
}

const spec = (algorithm: LimitSpec['algorithm'], limit: number, extra: Partial<LimitSpec> = {}) =>
  ({ name: 'l', unit: 'requests', limit, windowMs: W, algorithm, ...extra }) satisfies LimitSpec;

/** A small seeded PRNG (mulberry32): a failing schedule is reproduced from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ------------------------------------------------------------------------------ random schedules

type Kind = 'fixed' | 'sliding' | 'bucket';

interface Subject {
  readonly name: string;
  readonly limits: readonly LimitSpec[];
  readonly kind: Kind;
}

const SUBJECTS: readonly Subject[] = [
  { name: 'fixed_window', limits: [spec('fixed_window', 50)], kind: 'fixed' },
  {
    name: 'sliding_window, a log of requests',
    limits: [spec('sliding_window', 40)],
    kind: 'sliding',
  },
  {
    name: 'sliding_window, a log of (instant, cost) that overflows and merges',
    limits: [
      spec('sliding_window', 120, { unit: 'tokens' }),
      spec('sliding_window', 6, { name: 'rpm' }),
    ],
    kind: 'sliding',
  },
  { name: 'sliding_window in sub-buckets', limits: [spec('sliding_window', 300)], kind: 'sliding' },
  {
    name: 'token_bucket with a burst',
    limits: [spec('token_bucket', 100, { burst: 30 })],
    kind: 'bucket',
  },
  { name: 'token_bucket', limits: [spec('token_bucket', 40)], kind: 'bucket' },
];

const SCHEDULES = 100;
const EVENTS = 300;
const REPLICAS = 3;

type Step =
  | { op: 'take'; at: number; cost: 1 }
  | { op: 'grant'; at: number; id: number; holder: number; want: number; need: 1; n: number }
  | { op: 'giveBack'; at: number; id: number; spent: number };

interface Lease {
  readonly until: number;
  /** Units the holder means to spend: as many as the grant covers are. */
  readonly demand: number;
  /** Instants the holder spends at, before until, in order; unit j at instants[j % length]. */
  readonly instants: readonly number[];
}

interface Schedule {
  readonly seed: number;
  readonly ttlMs: number;
  readonly horizonMs: number;
  readonly takes: boolean;
  readonly overload: boolean;
  readonly steps: readonly Step[];
  readonly leases: ReadonlyMap<number, Lease>;
}

/** The deadline leaseUntil gives a grant at `at` (lease-spec.md), for planning spends ahead. */
function deadline(l: ScriptLimit, at: number, ttlMs: number, horizonMs: number): number {
  switch (l.algorithm) {
    case 'fixed_window':
      return Math.min(at - (at % l.windowMs) + l.windowMs, at + ttlMs);
    case 'sliding_window':
      return Math.min((Math.floor(at / l.bucketMs) + 1) * l.bucketMs, at + ttlMs);
    case 'sliding_log':
      return at + Math.max(1, Math.min(horizonMs, ttlMs, Math.floor(l.windowMs / 50)));
    default:
      return at + ttlMs;
  }
}

function schedule(l: ScriptLimit, seed: number): Schedule {
  const rand = prng(seed);
  const int = (n: number) => Math.floor(rand() * n); // 0..n-1
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const ttlMs = pick([20, 150, 400, 1000]);
  const horizonMs = pick([5, 50, 100, 300]);
  // A third of the schedules have no plain requests: what they admit is the grants' alone.
  const takes = seed % 3 !== 0;
  // Half of them overloaded: every holder means to spend more than it can be granted.
  const overload = seed % 2 === 0;
  const takeGap = 1 + int(40);
  // Overloaded holders want small shares, so a grant that charged more than it hands out would
  // leave the limit unfilled (one grant of everything would fill it anyway).
  const maxWant = overload ? 2 + int(Math.ceil(l.capacity / 4)) : 2 + int(l.capacity);
  const start = T0 + int(W);
  const planned: { step: Step; order: number }[] = [];
  const leases = new Map<number, Lease>();
  const nextAt = Array.from({ length: REPLICAS }, () => start + int(50));
  const holder = Array.from({ length: REPLICAS }, (_, r) => r);
  let nextHolder = REPLICAS;
  let nextTake = start + int(takeGap);
  let id = 0;
  const push = (step: Step) => planned.push({ step, order: planned.length });
  while (planned.length < EVENTS) {
    const r = nextAt.indexOf(Math.min(...nextAt));
    const x = nextAt[r]!;
    if (takes && nextTake <= x) {
      push({ op: 'take', at: nextTake, cost: 1 });
      nextTake += 1 + int(2 * takeGap);
      continue;
    }
    const want = 1 + int(maxWant);
    const until = deadline(l, x, ttlMs, horizonMs);
    // Demand past the grant is spent only as far as the grant goes.
    const demand = overload ? 2 * want : int(Math.ceil(want * 1.5) + 1);
    const instants = Array.from({ length: Math.min(demand, 8) }, () => x + int(until - x));
    instants.sort((a, b) => a - b);
    id++;
    push({ op: 'grant', at: x, id, holder: holder[r]!, want, need: 1, n: rand() < 0.5 ? 3 : 1 });
    leases.set(id, { until, demand, instants });
    const last = instants.length > 0 ? instants[instants.length - 1]! : x;
    if (rand() < 0.75) {
      // Gives back after its last spend: early (idle), at the deadline (renewal), or late (by
      // then the record may have expired, and nothing is given back).
      const z = last + int(Math.ceil((until - x) * 1.3) + 1);
      push({ op: 'giveBack', at: z, id, spent: demand });
      nextAt[r] = z + (rand() < 0.5 ? 0 : int(30));
    } else {
      // Dies: never gives back; its successor is another holder.
      holder[r] = nextHolder++;
      nextAt[r] = last + 1 + int(2 * (until - x));
    }
  }
  planned.sort((a, b) => a.step.at - b.step.at || a.order - b.order);
  return { seed, ttlMs, horizonMs, takes, overload, steps: planned.map((p) => p.step), leases };
}

/** Every unit spent, its instant in order; what the replies contradict of the plan goes to `wrong`. */
function run(s: Schedule, answered: number[][], wrong: string[]): number[] {
  const spent: number[] = [];
  const granted = new Map<number, number>();
  s.steps.forEach((step, i) => {
    const a = answered[i]!;
    if (step.op === 'take') {
      if (a[0] === 0) spent.push(step.at);
    } else if (step.op === 'grant') {
      const [g, until] = a as [number, number];
      if (g === 0) return;
      const lease = s.leases.get(step.id)!;
      if (until !== lease.until)
        wrong.push(`seed ${s.seed} step ${i}: until ${until}, not ${lease.until}`);
      if (g > step.want) wrong.push(`seed ${s.seed} step ${i}: granted ${g} > want ${step.want}`);
      granted.set(step.id, g);
      const n = Math.min(g, lease.demand);
      for (let j = 0; j < n; j++) spent.push(lease.instants[j % lease.instants.length]!);
    } else if (a[0] === 1) {
      const g = granted.get(step.id)!;
      if (a[1] !== g - Math.min(step.spent, g))
        wrong.push(`seed ${s.seed} step ${i}: gave back ${a[1]}`);
    }
  });
  return spent.sort((a, b) => a - b);
}

/**
 * Whether some [a, b] between spends holds more than burst + floor(limit * (b - a) / windowMs),
 * every pair checked in O(m log windowMs): with X = limit * t = q * windowMs + r, the refill of
 * [a, b] is q_b - q_a - (r_b < r_a ? 1 : 0), so for each b the worst a is the one with the
 * largest F(before a) - q_a (a Fenwick tree of maxima over r, for the r_a > r_b part).
 */
function bucketOverflows(l: ScriptLimit, at: readonly number[], sum: readonly number[]): boolean {
  const w = l.windowMs;
  const tree = new Array<number>(w + 1).fill(-Infinity); // index w - r: prefix = r above
  let best = -Infinity;
  for (let j = 0; j < at.length; j++) {
    const x = l.limit * at[j]!;
    const r = x % w;
    const q = (x - r) / w;
    const h = q - sum[j]!; // - (F(before j) - q_j)
    best = Math.max(best, h);
    for (let k = w - r; k <= w; k += k & -k) tree[k] = Math.max(tree[k]!, h);
    let above = -Infinity; // over r_i > r_j: indices 1..w - r - 1
    for (let k = w - r - 1; k > 0; k -= k & -k) above = Math.max(above, tree[k]!);
    const g = sum[j + 1]! - q;
    if (Math.max(g + best, g + above + 1) > l.capacity) return true;
  }
  return false;
}

/**
 * What was spent against what the limit allows: whether it was ever exceeded, and the fullest
 * window (for a bucket, the fullest interval of at most windowMs) as a share of the limit.
 */
function measure(l: ScriptLimit, kind: Kind, spent: readonly number[]) {
  let peak = 0;
  let over = false;
  if (kind === 'fixed') {
    const per = new Map<number, number>();
    for (const y of spent) {
      const w = Math.floor(y / l.windowMs);
      per.set(w, (per.get(w) ?? 0) + 1);
    }
    for (const n of per.values()) peak = Math.max(peak, n / l.limit);
    over = peak > 1;
  } else if (kind === 'sliding') {
    // Every interval of windowMs that matters ends at a spend: units in (y - windowMs, y].
    let from = 0;
    spent.forEach((y, to) => {
      while (spent[from]! <= y - l.windowMs) from++;
      let last = to;
      while (last + 1 < spent.length && spent[last + 1] === y) last++;
      peak = Math.max(peak, (last - from + 1) / l.limit);
    });
    over = peak > 1;
  } else {
    const at: number[] = [];
    const sum: number[] = [0];
    for (const y of spent) {
      if (at[at.length - 1] !== y) {
        at.push(y);
        sum.push(sum[sum.length - 1]!);
      }
      sum[sum.length - 1]!++;
    }
    over = bucketOverflows(l, at, sum);
    for (let i = 0; i < at.length; i++) {
      for (let j = i; j < at.length && at[j]! - at[i]! <= l.windowMs; j++) {
        const allowed = l.capacity + Math.floor((l.limit * (at[j]! - at[i]!)) / l.windowMs);
        peak = Math.max(peak, (sum[j + 1]! - sum[i]!) / allowed);
      }
    }
  }
  return { over, peak };
}

describe('capacity leases in the Lua algorithms: seeded schedules of 3 replicas (real Redis)', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    await redis.quit();
  });

  it.each(SUBJECTS)(
    '$name: nothing spent exceeds the limit, and overload fills it',
    async (subject) => {
      const l = scriptLimit(subject.limits);
      let best = 0;
      let units = 0;
      const wrong: string[] = [];
      for (let k = 0; k < SCHEDULES; k++) {
        const s = schedule(l, 1000 * SUBJECTS.indexOf(subject) + k);
        const input = { limit: l, ttlMs: s.ttlMs, horizonMs: s.horizonMs, steps: s.steps };
        const answered = (await redis.eval(RUNNER, 0, JSON.stringify(input))) as number[][];
        const spent = run(s, answered, wrong);
        units += spent.length;
        const { over, peak } = measure(l, subject.kind, spent);
        if (over)
          wrong.push(`seed ${s.seed} (ttlMs ${s.ttlMs}, horizonMs ${s.horizonMs}): over the limit`);
        if (s.overload && !s.takes) best = Math.max(best, peak);
      }
      expect(wrong).toEqual([]);
      // Grants alone (no plain requests) fill the limit in some overloaded schedule: a grant that
      // charged more than it hands out would not.
      expect(best).toBeGreaterThanOrEqual(0.9);
      expect(units).toBeGreaterThan(SCHEDULES * l.limit * 0.5);
    },
    // Seeded schedules run whole in Redis: about 1-3 s each on a loaded 2-core host, where Jest's
    // default 5 s cut the token bucket's short.
    30_000,
  );
});

// ------------------------------------------------------------------------- a table of instants

type LeaseStep =
  /** Admit `cost` if it fits (expect 0, and it is charged), else expect this retryAfterMs. */
  | readonly ['take', at: number, cost: number, retryAfterMs: number]
  /** leaseUntil then grant of g units; expect the deadline. */
  | readonly ['grant', at: number, g: number, ttlMs: number, horizonMs: number, until: number]
  /** The grant taken at t (with until) ends, `unspent` of its `granted` units returned. */
  | readonly ['giveBack', at: number, t: number, until: number, granted: number, unspent: number]
  /** The grant's record expired at expiresAt without give-back, seen at `at`. */
  | readonly ['expire', at: number, t: number, until: number, granted: number, expiresAt: number]
  /** Expect what stats would say: used, resetMs. */
  | readonly ['state', at: number, used: number, resetMs: number];

interface LeaseCase {
  readonly name: string;
  readonly limits: readonly LimitSpec[];
  readonly steps: readonly LeaseStep[];
}

const LEASE_CASES: readonly LeaseCase[] = [
  {
    name: 'fixed_window: a grant is spent until its window ends or its ttl; given back in its window only',
    limits: [spec('fixed_window', 10)],
    steps: [
      ['grant', T0 + 100, 4, 1000, 100, T0 + 1000],
      ['grant', T0 + 200, 2, 300, 100, T0 + 500],
      ['state', T0 + 200, 6, 800],
      ['take', T0 + 300, 5, 700],
      ['giveBack', T0 + 400, T0 + 100, T0 + 1000, 4, 3],
      ['take', T0 + 400, 5, 0],
      ['state', T0 + 400, 8, 600],
      ['grant', T0 + 900, 2, 1000, 100, T0 + 1000],
      ['take', T0 + 1000, 3, 0],
      ['giveBack', T0 + 1000, T0 + 900, T0 + 1000, 2, 2],
      ['state', T0 + 1000, 3, 1000],
    ],
  },
  {
    name: 'sliding_window in sub-buckets: a grant is spent within its own sub-bucket, and counts as it',
    limits: [spec('sliding_window', 300)],
    steps: [
      ['grant', T0 + 150, 100, 1000, 100, T0 + 200],
      ['grant', T0 + 160, 50, 20, 100, T0 + 180],
      ['state', T0 + 160, 150, 1040],
      ['giveBack', T0 + 250, T0 + 150, T0 + 200, 100, 60],
      ['state', T0 + 250, 90, 950],
      ['take', T0 + 1150, 211, 50],
      ['state', T0 + 1199, 90, 1],
      ['state', T0 + 1200, 0, 0],
    ],
  },
  {
    name: 'sliding_window as a log: a grant counts until a window after its deadline; later requests are dated no earlier',
    limits: [spec('sliding_window', 10)],
    steps: [
      // A horizon of 100 ms is capped at a fiftieth of the 1 s window: the deadline is T0 + 120.
      ['grant', T0 + 100, 3, 1000, 100, T0 + 120],
      ['take', T0 + 150, 1, 0],
      ['grant', T0 + 160, 2, 1000, 20, T0 + 180],
      ['state', T0 + 160, 6, 1020],
      // Full: the grant's 3 units (dated T0 + 120) are the first to leave, at T0 + 1120.
      ['take', T0 + 170, 5, 950],
      ['giveBack', T0 + 300, T0 + 100, T0 + 120, 3, 2],
      ['state', T0 + 300, 4, 880],
      ['state', T0 + 1119, 4, 61],
      ['state', T0 + 1120, 3, 60],
      ['state', T0 + 1180, 0, 0],
    ],
  },
  {
    name: 'sliding_window as a log: the deadline is the ttl when shorter; a late give back takes nothing',
    limits: [spec('sliding_window', 10)],
    steps: [
      ['grant', T0, 4, 10, 100, T0 + 10],
      ['take', T0 + 500, 7, 510],
      ['state', T0 + 1009, 4, 1],
      ['take', T0 + 1010, 1, 0],
      ['giveBack', T0 + 1020, T0, T0 + 10, 4, 4],
      ['state', T0 + 1020, 1, 990],
    ],
  },
  {
    name: 'token_bucket: nothing refills below what is held; a give back returns the unspent',
    limits: [spec('token_bucket', 10)],
    steps: [
      ['grant', T0, 4, 1000, 100, T0 + 1000],
      ['take', T0, 6, 0],
      ['take', T0, 1, 100],
      ['state', T0 + 1000, 4, 400],
      ['giveBack', T0 + 1000, T0, T0 + 1000, 4, 3],
      ['state', T0 + 1000, 1, 100],
      ['state', T0 + 1100, 0, 0],
    ],
  },
  {
    name: 'token_bucket: an expired grant refills from its expiry on',
    limits: [spec('token_bucket', 10)],
    steps: [
      ['grant', T0, 4, 500, 100, T0 + 500],
      ['take', T0 + 100, 6, 0],
      ['expire', T0 + 700, T0, T0 + 500, 4, T0 + 500],
      ['state', T0 + 700, 4, 400],
      ['state', T0 + 1100, 0, 0],
    ],
  },
  {
    name: 'token_bucket: a give back unholds its own grant only',
    limits: [spec('token_bucket', 10)],
    steps: [
      ['grant', T0, 3, 1000, 100, T0 + 1000],
      ['grant', T0, 5, 1000, 100, T0 + 1000],
      ['giveBack', T0 + 200, T0, T0 + 1000, 5, 5],
      ['state', T0 + 200, 3, 300],
      ['state', T0 + 900, 3, 300],
      ['giveBack', T0 + 900, T0, T0 + 1000, 3, 0],
      ['state', T0 + 1200, 0, 0],
    ],
  },
];

function harnessInput(c: LeaseCase): string {
  const steps = c.steps.map((step) => {
    switch (step[0]) {
      case 'take':
        return { op: step[0], at: step[1], cost: step[2] };
      case 'grant':
        return { op: step[0], at: step[1], g: step[2], ttlMs: step[3], horizonMs: step[4] };
      case 'giveBack': {
        const [op, at, t, until, granted, unspent] = step;
        return { op, at, t, until, granted, unspent };
      }
      case 'expire': {
        const [op, at, t, until, granted, expiresAt] = step;
        return { op, at, t, until, granted, expiresAt };
      }
      case 'state':
        return { op: step[0], at: step[1] };
    }
  });
  return JSON.stringify({ limit: scriptLimit(c.limits), steps });
}

function expected(c: LeaseCase): number[][] {
  return c.steps.map((step) => {
    switch (step[0]) {
      case 'take':
        return [step[3]];
      case 'grant':
        return [step[2], step[5]];
      case 'state':
        return [step[2], step[3]];
      default:
        return [];
    }
  });
}

describe('capacity leases in the Lua algorithms: exact instants (real Redis)', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    await redis.quit();
  });

  it.each(LEASE_CASES)('$name', async (c) => {
    expect(await redis.eval(HARNESS, 0, harnessInput(c))).toEqual(expected(c));
  });
});
