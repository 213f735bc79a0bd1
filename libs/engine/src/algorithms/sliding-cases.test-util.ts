import { compileQuota, type CompiledQuota } from '../quota/compile';
import { convertRow } from '../shard/migrate';
import type { LimitSpec } from '../types';
import type { CompiledLimit } from './algorithm';

/**
 * One table of instants for both implementations of sliding_window: the engine's
 * (sliding-window.ts, sliding-log.ts) and the cluster scripts' (lua/sliding_window.lua,
 * lua/sliding_log.lua, lua/adopt.lua), so the twins cannot drift. The engine runs it in
 * sliding-window.spec.ts, the Lua in real Redis in test/sliding-window-lua.e2e-spec.ts.
 */

/** A row: at `at`, do something to the limit under test, and expect what it answers. */
export type SlidingStep =
  /** Admit `cost` if it fits (expect 0 and it is charged), else expect this retryAfterMs. */
  | readonly ['take', at: number, cost: number, retryAfterMs: number]
  /** Charge without a check (usage nobody acquired, a settle up). */
  | readonly ['usage', at: number, cost: number]
  /** Give back `cost` charged at `chargedAt` (release, a settle down). */
  | readonly ['refund', at: number, chargedAt: number, cost: number]
  /** Expect what stats would say: used, resetMs. */
  | readonly ['state', at: number, used: number, resetMs: number]
  /** The quota's limits change; the limit under test keeps its name (a config change). */
  | readonly ['change', at: number, limits: readonly LimitSpec[]];

export interface SlidingCase {
  readonly name: string;
  /** The quota's limits; the first is under test, the others decide its regime. */
  readonly limits: readonly LimitSpec[];
  readonly steps: readonly SlidingStep[];
}

const T0 = 1_700_000_000_000; // a multiple of 1000

const sliding = (limit: number, extra: Partial<LimitSpec> = {}): LimitSpec => ({
  name: 'l',
  unit: 'requests',
  limit,
  windowMs: 1000,
  algorithm: 'sliding_window',
  ...extra,
});
const tokens = (limit: number): LimitSpec => sliding(limit, { unit: 'tokens' });
/** A limit of requests beside the one under test: its bound sizes a log of (instant, cost). */
const rpm = (limit: number): LimitSpec => ({ ...sliding(limit), name: 'rpm' });

export const SLIDING_CASES: readonly SlidingCase[] = [
  // ------------------------------------------------------------ a log of requests (limit <= 64)
  {
    name: 'log: a refusal retries the instant its oldest needed request leaves the window',
    limits: [sliding(3)],
    steps: [
      ['take', T0 + 50, 2, 0],
      ['take', T0 + 520, 1, 0],
      ['take', T0 + 530, 1, 520],
      ['take', T0 + 1049, 1, 1],
      ['take', T0 + 1050, 1, 0],
      ['take', T0 + 1050, 2, 470],
      ['take', T0 + 1520, 2, 0],
      ['state', T0 + 1520, 3, 1000],
    ],
  },
  {
    name: 'log: no interval of windowMs admits more than the limit, and nothing older counts',
    limits: [sliding(4)],
    steps: [
      ['take', T0 + 990, 4, 0],
      ['take', T0 + 1000, 1, 990],
      ['take', T0 + 1989, 1, 1],
      ['take', T0 + 1990, 4, 0],
      ['state', T0 + 2989, 4, 1],
      ['state', T0 + 2990, 0, 0],
    ],
  },
  {
    name: 'log: a cost of exactly the limit, and of 0',
    limits: [sliding(5)],
    steps: [
      ['take', T0, 5, 0],
      ['take', T0 + 1, 0, 0],
      ['take', T0 + 2, 5, 998],
      ['take', T0 + 1000, 5, 0],
    ],
  },
  {
    name: 'log: a clock stepping back dates what it counted at the new now, a window from it',
    limits: [sliding(2)],
    steps: [
      ['take', T0 + 5000, 2, 0],
      ['take', T0, 1, 1000],
      ['take', T0 + 999, 1, 1],
      ['take', T0 + 1000, 1, 0],
      ['state', T0 + 3000, 0, 0],
      ['take', T0 + 2500, 2, 0],
      ['take', T0 + 3499, 1, 1],
      ['take', T0 + 3500, 1, 0],
    ],
  },
  {
    name: 'log: a clock an hour ahead and back locks a window, and a small step moves the newer only',
    limits: [sliding(3)],
    steps: [
      ['take', T0 + 3_600_100, 2, 0],
      ['take', T0 + 3_600_200, 1, 0],
      ['take', T0 + 3_600_300, 1, 800],
      ['take', T0, 1, 1000],
      ['state', T0 + 400, 3, 600],
      ['take', T0 + 1000, 1, 0],
      ['take', T0 + 1500, 2, 0],
      // Back 300 ms: the entry of T0+1500 moves to T0+1200, the one of T0+1000 stays.
      ['take', T0 + 1200, 1, 800],
      ['take', T0 + 1999, 1, 1],
      ['take', T0 + 2000, 1, 0],
      ['take', T0 + 2199, 1, 1],
      ['take', T0 + 2200, 2, 0],
    ],
  },
  {
    name: 'log: a refund gives back the newest cost charged at or before it, while it counts',
    limits: [sliding(2)],
    steps: [
      ['take', T0, 1, 0],
      ['take', T0 + 300, 1, 0],
      ['refund', T0 + 400, T0 + 300, 1],
      ['state', T0 + 400, 1, 600],
      ['take', T0 + 400, 1, 0],
      ['refund', T0 + 1200, T0, 1],
      ['state', T0 + 1200, 1, 200],
    ],
  },
  {
    name: 'log: a refund larger than its instant holds takes older units, never newer ones',
    limits: [sliding(5)],
    steps: [
      ['take', T0, 1, 0],
      ['take', T0 + 100, 1, 0],
      ['take', T0 + 200, 1, 0],
      ['refund', T0 + 300, T0 + 100, 2],
      ['state', T0 + 300, 1, 900],
      ['take', T0 + 300, 5, 900],
    ],
  },
  {
    name: 'log: usage past the limit is carried until the last of it leaves, then frees',
    limits: [sliding(3)],
    steps: [
      ['take', T0, 1, 0],
      ['usage', T0 + 100, 4],
      ['state', T0 + 100, 5, 1000],
      ['take', T0 + 1000, 1, 100],
      ['take', T0 + 1100, 3, 0],
    ],
  },
  // ------------------------------------------------ a log of (instant, cost) under a small rpm
  {
    name: 'pairs: tokens under an rpm of 3 retry the instant their oldest needed tokens leave',
    limits: [tokens(100), rpm(3)],
    steps: [
      ['take', T0, 60, 0],
      ['take', T0 + 100, 30, 0],
      ['take', T0 + 200, 20, 800],
      ['refund', T0 + 200, T0 + 100, 20],
      ['take', T0 + 200, 20, 0],
      // A fourth entry in a log of three: the neighbours closest in time (the oldest on a tie)
      // become one at the later instant; the merged tokens count 100 ms longer, never less.
      ['usage', T0 + 300, 5],
      ['state', T0 + 300, 95, 1000],
      ['take', T0 + 400, 10, 700],
      ['take', T0 + 1100, 10, 0],
    ],
  },
  {
    name: 'pairs: one entry per instant; a full log joins the newest to a close new one',
    limits: [tokens(100), rpm(2)],
    steps: [
      ['take', T0, 10, 0],
      ['take', T0, 10, 0],
      ['take', T0 + 500, 10, 0],
      ['usage', T0 + 510, 10],
      ['state', T0 + 510, 40, 1000],
      ['take', T0 + 1000, 80, 0],
      ['take', T0 + 1000, 1, 510],
    ],
  },
  // ------------------------------------------- sub-buckets (limits above the log), precision 10
  {
    name: 'buckets: refuse until the sub-bucket holding the oldest admissions slides out',
    limits: [sliding(300)],
    steps: [
      ['take', T0 + 50, 200, 0],
      ['take', T0 + 520, 100, 0],
      ['take', T0 + 530, 100, 570],
      ['take', T0 + 1099, 100, 1],
      ['take', T0 + 1100, 100, 0],
      ['take', T0 + 1100, 200, 500],
      ['take', T0 + 1600, 200, 0],
    ],
  },
  {
    name: 'buckets: never more than the limit in any interval of windowMs (no boundary burst)',
    limits: [sliding(400)],
    steps: [
      ['take', T0 + 990, 400, 0],
      ['take', T0 + 1000, 100, 1000],
      ['take', T0 + 1500, 100, 500],
      ['take', T0 + 1989, 100, 11],
      ['take', T0 + 2100, 400, 0],
    ],
  },
  {
    name: 'buckets: precision 1 behaves like two whole windows',
    limits: [sliding(200, { precision: 1 })],
    steps: [
      ['take', T0 + 10, 200, 0],
      ['take', T0 + 1500, 100, 500],
      ['take', T0 + 2000, 200, 0],
    ],
  },
  {
    name: 'buckets: a cost of exactly the limit, of 0, and a refund while its bucket counts',
    limits: [sliding(500)],
    steps: [
      ['take', T0, 500, 0],
      ['take', T0 + 1, 0, 0],
      ['take', T0 + 2, 500, 1098],
      ['refund', T0 + 300, T0, 100],
      ['state', T0 + 300, 400, 800],
      ['take', T0 + 1100, 500, 0],
    ],
  },
  {
    name: 'buckets: a clock stepping back moves later buckets into the new now, a window from it',
    limits: [sliding(200)],
    steps: [
      ['take', T0 + 5000, 200, 0],
      ['take', T0, 100, 1100],
      ['take', T0 + 1099, 100, 1],
      ['take', T0 + 1100, 100, 0],
    ],
  },
  {
    name: 'buckets: a clock an hour ahead and back; a small step keeps the older buckets apart',
    limits: [sliding(300)],
    steps: [
      ['take', T0 + 3_600_050, 200, 0],
      ['take', T0 + 3_600_150, 100, 0],
      ['take', T0 + 3_600_160, 1, 940],
      ['take', T0 + 10, 1, 1090],
      ['state', T0 + 10, 300, 1090],
      ['take', T0 + 1100, 200, 0],
      ['take', T0 + 1450, 100, 0],
      // Back to T0+1250: the bucket of T0+1400 joins that of T0+1200; T0+1100's stays apart.
      ['take', T0 + 1250, 200, 950],
      ['take', T0 + 2199, 200, 1],
      ['take', T0 + 2200, 200, 0],
      ['take', T0 + 2200, 100, 100],
      ['take', T0 + 2300, 100, 0],
    ],
  },
  {
    name: 'pairs: a clock stepping back joins the entries it moves to the new now into one',
    limits: [tokens(100), rpm(3)],
    steps: [
      ['take', T0 + 5000, 60, 0],
      ['take', T0 + 5100, 30, 0],
      ['take', T0, 20, 1000],
      ['state', T0, 90, 1000],
      ['take', T0 + 300, 10, 0],
      ['take', T0 + 400, 1, 600],
      ['take', T0 + 1000, 90, 0],
      ['take', T0 + 1000, 1, 300],
    ],
  },
  // ----------------------------------- a limit changing layout over the same window keeps counts
  {
    name: 'change: buckets to a log count each bucket as long as it did, and back',
    limits: [sliding(100)],
    steps: [
      ['take', T0 + 50, 2, 0],
      ['take', T0 + 120, 1, 0],
      // The bucket of T0+0..99 counted until T0+1100: its two at T0+100; T0+100..199's at T0+200.
      ['change', T0 + 150, [sliding(3)]],
      ['state', T0 + 150, 3, 1050],
      ['take', T0 + 150, 1, 950],
      ['take', T0 + 1100, 2, 0],
      ['take', T0 + 1199, 1, 1],
      // Two at T0+1100 go to the bucket of T0+1000..1099, which counts until T0+2100.
      ['change', T0 + 1200, [sliding(100)]],
      ['state', T0 + 1200, 2, 900],
    ],
  },
  {
    name: 'change: a lowered limit carries what its log cannot hold, counted no shorter',
    limits: [sliding(5)],
    steps: [
      ['take', T0, 2, 0],
      ['take', T0 + 100, 2, 0],
      ['take', T0 + 200, 1, 0],
      ['change', T0 + 300, [sliding(3)]],
      ['state', T0 + 300, 5, 900],
      ['take', T0 + 300, 1, 800],
      // The carry counts the unit of T0+100 with that of T0+200, until T0+1200.
      ['take', T0 + 1100, 2, 100],
      ['take', T0 + 1200, 2, 0],
    ],
  },
  {
    name: 'change: another precision keeps each bucket counting until at least when it did',
    limits: [sliding(100)],
    steps: [
      ['take', T0 + 50, 2, 0],
      ['change', T0 + 150, [sliding(100, { precision: 5 })]],
      // Sub-buckets of 200 ms: the two count until T0+1200 now, later than T0+1100, not earlier.
      ['state', T0 + 150, 2, 1050],
      ['take', T0 + 150, 99, 1050],
    ],
  },
  {
    name: 'change: a log of pairs shrinks with its rpm, joining the closest entries',
    limits: [tokens(100), rpm(3)],
    steps: [
      ['take', T0, 10, 0],
      ['take', T0 + 100, 10, 0],
      ['take', T0 + 200, 10, 0],
      ['change', T0 + 300, [tokens(100), rpm(2)]],
      ['state', T0 + 300, 30, 900],
      ['take', T0 + 300, 80, 800],
      ['take', T0 + 1000, 80, 100],
      ['take', T0 + 1100, 80, 0],
    ],
  },
  {
    name: 'change: a log of pairs to sub-buckets when the rpm above it grows',
    limits: [tokens(100), rpm(3)],
    steps: [
      ['take', T0 + 50, 60, 0],
      ['take', T0 + 420, 30, 0],
      ['change', T0 + 500, [tokens(100), rpm(100)]],
      ['state', T0 + 500, 90, 1000],
      ['take', T0 + 500, 20, 600],
      ['take', T0 + 1100, 20, 0],
    ],
  },
];

/** What a step answered: take [retryAfterMs], state [used, resetMs], the others nothing. */
export function expected(c: SlidingCase): number[][] {
  return c.steps.map((step) => {
    switch (step[0]) {
      case 'take':
        return [step[3]];
      case 'state':
        return [step[2], step[3]];
      case 'usage':
      case 'refund':
      case 'change':
        return [];
    }
  });
}

/** The limit under test of a quota: the first, by its name. */
export function limitUnderTest(q: CompiledQuota, name: string): CompiledLimit {
  const l = q.limits.find((x) => x.name === name);
  if (l === undefined) throw new Error(`no limit ${name}`);
  return l;
}

/** Runs a case on the engine's algorithms, as a shard drives them (sync before each step). */
export function runOnEngine(c: SlidingCase): number[][] {
  const name = c.limits[0]!.name;
  let q = compileQuota({ name: 'q', limits: c.limits });
  let row = new Float64Array(q.stride);
  return c.steps.map((step) => {
    const l = limitUnderTest(q, name);
    const o = l.offset;
    const at = step[1];
    if (step[0] === 'change') {
      const next = compileQuota({ name: 'q', limits: step[2] });
      const moved = new Float64Array(next.stride);
      convertRow(q.limits, row, 0, next.limits, moved, 0, at);
      [q, row] = [next, moved];
      return [];
    }
    l.impl.sync(row, o, l, at);
    switch (step[0]) {
      case 'take': {
        const cost = step[2];
        if (cost > 0 && l.impl.available(row, o, l) < cost) {
          return [l.impl.retryAfter(row, o, l, at, cost)];
        }
        l.impl.charge(row, o, l, at, cost);
        return [0];
      }
      case 'usage':
        l.impl.charge(row, o, l, at, step[2]);
        return [];
      case 'refund':
        l.impl.refund(row, o, l, step[2], step[3]);
        return [];
      case 'state':
        return [l.impl.used(row, o, l), l.impl.resetMs(row, o, l, at)];
    }
  });
}
