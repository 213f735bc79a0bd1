import { costFor } from '../quota/cost';
import { ROW_APPROVED, ROW_DENIED, ROW_STATS_WINDOW, type CompiledQuota } from '../quota/compile';
import type { Cost, DecisionCode, LimitStats } from '../types';
import type { Reply } from './decision';

/**
 * The limits of one quota against one row, as values: each function reads the row at `base` and
 * returns what it found; only `chargeAll` and `touchStats` write, and they say so.
 */

/**
 * Why a request is not admitted now, and when it could be. Made only on refusal: admitting
 * allocates nothing.
 */
export interface Verdict {
  readonly code: DecisionCode;
  /** Index of the limit that refuses longest, or -1 (waiters ahead, concurrency cap). */
  readonly refusing: number;
  readonly retryMs: number;
}

/** Cost per limit of one request, in the quota's limit order. */
export class Costs {
  private values = new Float64Array(8);

  /** Fills the costs of `cost`; returns the index of the first limit it exceeds, or -1. */
  fill(q: CompiledQuota, cost: Cost | undefined): number {
    const limits = q.limits;
    if (this.values.length < limits.length) this.values = new Float64Array(limits.length * 2);
    const values = this.values;
    let exceeds = -1;
    for (let i = 0; i < limits.length; i++) {
      const l = limits[i]!;
      const c = costFor(cost, l.unit);
      values[i] = c;
      if (c > l.capacity && exceeds < 0) exceeds = i;
    }
    return exceeds;
  }

  at(i: number): number {
    return this.values[i]!;
  }
}

/** Syncs every limit of the row to `now`; the limit that refuses longest, or undefined: admitted. */
export function check(
  q: CompiledQuota,
  costs: Costs,
  s: Float64Array,
  base: number,
  now: number,
): Verdict | undefined {
  const limits = q.limits;
  let refusing = -1;
  let retry = 0;
  for (let i = 0; i < limits.length; i++) {
    const l = limits[i]!;
    const o = base + l.offset;
    l.impl.sync(s, o, l, now);
    const c = costs.at(i);
    if (c > 0 && l.impl.available(s, o, l) < c) {
      const r = l.impl.retryAfter(s, o, l, now, c);
      if (refusing < 0 || r > retry) {
        retry = r;
        refusing = i;
      }
    }
  }
  return refusing < 0 ? undefined : { code: 'RATE_LIMITED', refusing, retryMs: retry };
}

/** Writes: brings every limit of the row forward to `now`. */
export function syncRow(q: CompiledQuota, s: Float64Array, base: number, now: number): void {
  for (const l of q.limits) l.impl.sync(s, base + l.offset, l, now);
}

/** Writes: charges `costs` to every limit of the row (a `check` at `now` admitted them). */
export function chargeAll(
  q: CompiledQuota,
  costs: Costs,
  s: Float64Array,
  base: number,
  now: number,
): void {
  const limits = q.limits;
  for (let i = 0; i < limits.length; i++) {
    const l = limits[i]!;
    const c = costs.at(i);
    if (c > 0) l.impl.charge(s, base + l.offset, l, now, c);
  }
}

/** Fills limit, remaining, resetMs and limitName from the binding limit (-1: the least left). */
export function describe(
  r: Reply,
  q: CompiledQuota,
  s: Float64Array,
  base: number,
  now: number,
  refusing: number,
): void {
  const limits = q.limits;
  if (limits.length === 0) return;
  let idx = refusing;
  if (idx < 0) {
    idx = 0;
    if (limits.length > 1) {
      let least = Infinity;
      for (let i = 0; i < limits.length; i++) {
        const l = limits[i]!;
        const share = l.impl.available(s, base + l.offset, l) / l.capacity;
        if (share < least) {
          least = share;
          idx = i;
        }
      }
    }
  }
  const l = limits[idx]!;
  const o = base + l.offset;
  r.limit = l.capacity;
  r.remaining = Math.max(0, l.impl.available(s, o, l));
  r.resetMs = l.impl.resetMs(s, o, l, now);
  r.limitName = l.name;
}

export function reasonFor(code: DecisionCode, q: CompiledQuota, refusing: number): string {
  switch (code) {
    case 'RATE_LIMITED':
      return refusing >= 0 ? q.limits[refusing]!.reached : 'requests are waiting ahead';
    case 'CONCURRENCY_LIMITED':
      return q.concurrencyReached;
    case 'QUEUE_FULL':
      return q.queueFull;
    case 'WAIT_TIMEOUT':
      return 'waited until the deadline';
    case 'OK':
    case 'COST_EXCEEDS_LIMIT':
    case 'UNKNOWN_QUOTA':
    case 'INVALID_REQUEST':
    case 'UNAVAILABLE':
      return code;
  }
}

/** Start of the window the row's approved/denied counts belong to (the first limit's). */
export function statsWindow(q: CompiledQuota, s: Float64Array, base: number, now: number): number {
  const first = q.limits[0];
  return first === undefined ? 0 : first.impl.windowStart(s, base + first.offset, first, now);
}

/** Writes: starts the row's approved/denied counts afresh when the stats window turned. */
export function touchStats(q: CompiledQuota, s: Float64Array, base: number, now: number): void {
  const start = statsWindow(q, s, base, now);
  if (s[base + ROW_STATS_WINDOW] !== start) {
    s[base + ROW_STATS_WINDOW] = start;
    s[base + ROW_APPROVED] = 0;
    s[base + ROW_DENIED] = 0;
  }
}

/** Writes: gives `cost`, charged at `chargedAt`, back to every limit where it still counts. */
export function refundAll(
  q: CompiledQuota,
  s: Float64Array,
  base: number,
  cost: Cost | undefined,
  chargedAt: number,
  now: number,
): void {
  for (const l of q.limits) {
    const c = costFor(cost, l.unit);
    if (c > 0) {
      l.impl.sync(s, base + l.offset, l, now);
      l.impl.refund(s, base + l.offset, l, chargedAt, c);
    }
  }
}

/** Writes: moves every limit from `charged` (at `chargedAt`; undefined: the default) to `actual`. */
export function settleAll(
  q: CompiledQuota,
  s: Float64Array,
  base: number,
  charged: Cost | undefined,
  actual: Cost,
  chargedAt: number,
  now: number,
): void {
  for (const l of q.limits) {
    const o = base + l.offset;
    l.impl.sync(s, o, l, now);
    const delta = costFor(actual, l.unit) - costFor(charged, l.unit);
    if (delta > 0) l.impl.charge(s, o, l, now, delta);
    else if (delta < 0) l.impl.refund(s, o, l, chargedAt, -delta);
  }
}

/** Every limit of the row as stats (synced to `now`). */
export function limitStats(
  q: CompiledQuota,
  s: Float64Array,
  base: number,
  now: number,
): LimitStats[] {
  const out: LimitStats[] = [];
  for (const l of q.limits) {
    const o = base + l.offset;
    l.impl.sync(s, o, l, now);
    out.push({
      name: l.name,
      unit: l.unit,
      limit: l.capacity,
      used: l.impl.used(s, o, l),
      remaining: Math.max(0, l.impl.available(s, o, l)),
      resetMs: l.impl.resetMs(s, o, l, now),
    });
  }
  return out;
}
