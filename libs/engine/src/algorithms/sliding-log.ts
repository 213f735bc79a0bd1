import type { CompiledLimit, LimitAlgorithm } from './algorithm';
import { isCount, isInstant, isIntegerUpTo } from './state-check';

// The exact regime of sliding_window (compile.ts decides which limits keep it): every admission
// with its instant, so a cost charged at t counts for the instants [t, t + windowMs) and not one
// ms longer, and retryAfter is the instant the oldest needed cost leaves the window.
//
// Row: [seen, start, count, total, carry, carryUntil, ring of `logSize` entries]. An entry is one
// unit of cost at an instant (a log of requests: `logUnits`) or an (instant, cost) pair. Entries
// are in the order of their instants, oldest at `start`; `seen` is the latest `now` synced. A
// clock that steps back before `seen` dates every entry after the new `now` at `now` (stepBack):
// each was charged no later than now, so it counts a window from now at most.
//
// More cost than the log holds (usage past the limit, a lowered limit, costs with no request):
// a log of units keeps the units that do not fit as `carry`, counted until the latest instant one
// of them stops counting; a log of pairs merges the two neighbouring entries closest in time into
// the later one. Both count a cost longer, never shorter: exactness is lost, never the limit.
const SEEN = 0;
const START = 1;
const COUNT = 2;
const TOTAL = 3;
const CARRY = 4;
const CARRY_UNTIL = 5;
const ENTRIES = 6;

/** Row offset of entry `j` (0: the oldest) of the ring. */
function entryAt(s: Float64Array, o: number, limit: CompiledLimit, j: number): number {
  let p = s[o + START]! + j;
  if (p >= limit.logSize) p -= limit.logSize;
  return o + ENTRIES + (limit.logUnits ? p : 2 * p);
}

function costAt(s: Float64Array, at: number, limit: CompiledLimit): number {
  return limit.logUnits ? 1 : s[at + 1]!;
}

function newest(s: Float64Array, o: number, limit: CompiledLimit): number {
  const n = s[o + COUNT]!;
  return n === 0 ? 0 : s[entryAt(s, o, limit, n - 1)]!;
}

/** Moves entry `from` to the place of entry `to`. */
function moveEntry(s: Float64Array, o: number, limit: CompiledLimit, from: number, to: number) {
  const a = entryAt(s, o, limit, from);
  const b = entryAt(s, o, limit, to);
  s[b] = s[a]!;
  if (!limit.logUnits) s[b + 1] = s[a + 1]!;
}

/** Drops `n` entries from position `j` on: the newer ones move back into their place. */
function removeEntries(s: Float64Array, o: number, limit: CompiledLimit, j: number, n: number) {
  const count = s[o + COUNT]!;
  for (let k = j + n; k < count; k++) moveEntry(s, o, limit, k, k - n);
  s[o + COUNT] = count - n;
}

/** Makes room in a full log of pairs: the neighbours closest in time become one, at the later. */
function mergeClosest(s: Float64Array, o: number, limit: CompiledLimit, t: number): boolean {
  const count = s[o + COUNT]!;
  let best = count - 1;
  let gap = t - s[entryAt(s, o, limit, count - 1)]!;
  for (let j = 0; j < count - 1; j++) {
    const d = s[entryAt(s, o, limit, j + 1)]! - s[entryAt(s, o, limit, j)]!;
    if (d <= gap && (d < gap || j < best)) {
      gap = d;
      best = j;
    }
  }
  if (best === count - 1) return false; // the newest joins the new entry: the caller moves it
  const a = entryAt(s, o, limit, best);
  const b = entryAt(s, o, limit, best + 1);
  s[b + 1] = s[b + 1]! + s[a + 1]!;
  removeEntries(s, o, limit, best, 1);
  return true;
}

/** Counts `cost` from instant `t`, no earlier than the newest entry (the order of the ring). */
function add(s: Float64Array, o: number, limit: CompiledLimit, t: number, cost: number): void {
  s[o + TOTAL] = s[o + TOTAL]! + cost;
  const size = limit.logSize;
  let count = s[o + COUNT]!;
  if (limit.logUnits) {
    const fits = Math.min(cost, size - count);
    for (let k = 0; k < fits; k++) {
      s[o + COUNT] = ++count;
      s[entryAt(s, o, limit, count - 1)] = t;
    }
    if (fits < cost) {
      s[o + CARRY] = s[o + CARRY]! + cost - fits;
      s[o + CARRY_UNTIL] = Math.max(s[o + CARRY_UNTIL]!, t + limit.windowMs);
    }
    return;
  }
  if (count > 0) {
    const last = entryAt(s, o, limit, count - 1);
    if (s[last] === t || (count === size && !mergeClosest(s, o, limit, t))) {
      s[last] = t;
      s[last + 1] = s[last + 1]! + cost;
      return;
    }
    count = s[o + COUNT]!;
  }
  s[o + COUNT] = count + 1;
  const at = entryAt(s, o, limit, count);
  s[at] = t;
  s[at + 1] = cost;
}

/**
 * The clock stepped back from `seen` to `now`. Entries dated after now move to now, in order, one
 * entry per instant in a log of pairs; an entry dated after `seen` (ahead of the clock by a change
 * of layout, or a Lua lease's deadline) keeps its lead over the clock. The carry moves likewise.
 */
function stepBack(s: Float64Array, o: number, limit: CompiledLimit, now: number, seen: number) {
  const redate = (t: number): number => (t <= seen ? Math.min(t, now) : now + (t - seen));
  const count = s[o + COUNT]!;
  let kept = 0;
  for (let j = 0; j < count; j++) {
    const from = entryAt(s, o, limit, j);
    const t = redate(s[from]!);
    if (!limit.logUnits && kept > 0) {
      const last = entryAt(s, o, limit, kept - 1);
      if (s[last] === t) {
        s[last + 1] = s[last + 1]! + s[from + 1]!;
        continue;
      }
    }
    const to = entryAt(s, o, limit, kept++);
    s[to] = t;
    if (!limit.logUnits) s[to + 1] = s[from + 1]!;
  }
  s[o + COUNT] = kept;
  if (s[o + CARRY]! > 0) {
    s[o + CARRY_UNTIL] = redate(s[o + CARRY_UNTIL]! - limit.windowMs) + limit.windowMs;
  }
}

export const slidingLog: LimitAlgorithm = {
  slots: (limit) => ENTRIES + limit.logSize * (limit.logUnits ? 1 : 2),

  sync(s, o, limit, now) {
    let seen = s[o + SEEN]!;
    if (now < seen) stepBack(s, o, limit, now, seen);
    if (now !== seen) s[o + SEEN] = seen = now;
    let count = s[o + COUNT]!;
    if (count > 0) {
      const w = limit.windowMs;
      let at = entryAt(s, o, limit, 0);
      if (s[at]! + w <= seen) {
        let start = s[o + START]!;
        let total = s[o + TOTAL]!;
        do {
          total -= costAt(s, at, limit);
          if (++start === limit.logSize) start = 0;
          s[o + START] = start;
          count--;
          at = entryAt(s, o, limit, 0);
        } while (count > 0 && s[at]! + w <= seen);
        s[o + COUNT] = count;
        s[o + TOTAL] = total;
      }
    }
    const carry = s[o + CARRY]!;
    if (carry > 0 && s[o + CARRY_UNTIL]! <= seen) {
      s[o + TOTAL] = s[o + TOTAL]! - carry;
      s[o + CARRY] = 0;
      s[o + CARRY_UNTIL] = 0;
    }
  },

  syncedAt: (s, o) => s[o + SEEN]!,

  available: (s, o, limit) => limit.limit - s[o + TOTAL]!,

  charge(s, o, limit, now, cost) {
    if (cost <= 0) return;
    if (now > s[o + SEEN]!) s[o + SEEN] = now;
    add(s, o, limit, Math.max(s[o + SEEN]!, newest(s, o, limit)), cost);
  },

  refund(s, o, limit, chargedAt, cost) {
    // From the newest entries charged at or before `chargedAt`: the cost charged then is one of
    // them or counts at least as long, so giving these back never frees more than it should.
    let j = s[o + COUNT]! - 1;
    while (j >= 0 && s[entryAt(s, o, limit, j)]! > chargedAt) j--;
    if (limit.logUnits) {
      const n = Math.min(cost, j + 1);
      removeEntries(s, o, limit, j + 1 - n, n);
      s[o + TOTAL] = s[o + TOTAL]! - n;
      return;
    }
    let left = cost;
    for (; j >= 0 && left > 0; j--) {
      const at = entryAt(s, o, limit, j);
      const back = Math.min(left, s[at + 1]!);
      s[at + 1] = s[at + 1]! - back;
      s[o + TOTAL] = s[o + TOTAL]! - back;
      left -= back;
      if (s[at + 1] === 0) removeEntries(s, o, limit, j, 1);
    }
  },

  retryAfter(s, o, limit, now, cost) {
    const need = s[o + TOTAL]! + cost - limit.limit;
    if (need <= 0) return 0;
    const w = limit.windowMs;
    const count = s[o + COUNT]!;
    let carry = s[o + CARRY]!;
    const carryUntil = s[o + CARRY_UNTIL]!;
    let freed = 0;
    for (let j = 0; j < count; j++) {
      const at = entryAt(s, o, limit, j);
      const leaves = s[at]! + w;
      if (carry > 0 && carryUntil <= leaves) {
        freed += carry;
        carry = 0;
        if (freed >= need) return Math.max(1, carryUntil - now);
      }
      freed += costAt(s, at, limit);
      if (freed >= need) return Math.max(1, leaves - now);
    }
    return Math.max(1, slidingLog.idleAt(s, o, limit) - now);
  },

  used: (s, o) => s[o + TOTAL]!,

  resetMs(s, o, limit, now) {
    return s[o + TOTAL]! > 0 ? Math.max(0, slidingLog.idleAt(s, o, limit) - now) : 0;
  },

  windowStart: (_s, _o, limit, now) => now - (now % limit.windowMs),

  idleAt(s, o, limit) {
    if (s[o + TOTAL]! <= 0) return 0;
    const last = s[o + COUNT]! > 0 ? newest(s, o, limit) + limit.windowMs : 0;
    return s[o + CARRY]! > 0 ? Math.max(last, s[o + CARRY_UNTIL]!) : last;
  },

  counted(s, o, limit, visit) {
    const count = s[o + COUNT]!;
    let carry = s[o + CARRY]!;
    const carryUntil = s[o + CARRY_UNTIL]!;
    // Units of one instant go as one cost.
    let until = 0;
    let cost = 0;
    const flush = (): void => {
      if (cost > 0) visit(until, cost);
      cost = 0;
    };
    for (let j = 0; j < count; j++) {
      const at = entryAt(s, o, limit, j);
      const leaves = s[at]! + limit.windowMs;
      if (carry > 0 && carryUntil <= leaves) {
        flush();
        visit(carryUntil, carry);
        carry = 0;
      }
      if (leaves !== until) flush();
      until = leaves;
      cost += costAt(s, at, limit);
    }
    flush();
    if (carry > 0) visit(carryUntil, carry);
  },

  chargeUntil(s, o, limit, now, cost, until) {
    if (cost <= 0 || until <= Math.max(now, s[o + SEEN]!)) return;
    add(s, o, limit, Math.max(until - limit.windowMs, newest(s, o, limit)), cost);
  },

  stateProblem(s, o, limit) {
    const w = limit.windowMs;
    const seen = s[o + SEEN]!;
    if (!isInstant(seen)) return 'seen: must be an instant (epoch ms)';
    if (!isIntegerUpTo(s[o + START]!, limit.logSize - 1)) return 'start: must index the log';
    const count = s[o + COUNT]!;
    if (!isIntegerUpTo(count, limit.logSize)) return `count: must be from 0 to ${limit.logSize}`;
    let sum = 0;
    let previous = 0;
    for (let j = 0; j < count; j++) {
      const at = entryAt(s, o, limit, j);
      // A layout change dates entries up to two sub-buckets after the clock, never a window.
      if (!isIntegerUpTo(s[at]!, seen + w) || s[at]! < previous) {
        return `entries[${j}]: must be in order, no later than a window after seen`;
      }
      previous = s[at]!;
      const cost = costAt(s, at, limit);
      if (!isCount(cost) || cost === 0) return `entries[${j}].cost: must be an integer >= 1`;
      sum += cost;
    }
    const carry = s[o + CARRY]!;
    if (!isCount(carry)) return 'carry: must be an integer >= 0';
    if (!isIntegerUpTo(s[o + CARRY_UNTIL]!, seen + 2 * w)) {
      return 'carryUntil: must be no later than two windows after seen';
    }
    return s[o + TOTAL] === sum + carry ? undefined : 'total: must be the entries and the carry';
  },
};
