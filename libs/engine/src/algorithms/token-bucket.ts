import type { CompiledLimit, LimitAlgorithm } from './algorithm';
import { isCount, isInstant } from './state-check';

// Row: [deficit, lastRefill]. The deficit (capacity minus tokens) is kept in units of
// 1/windowMs token, so refill (`elapsedMs * limit`) and charges stay exact integers: a retryAfter
// computed here is never off by a rounding error. Zero deficit is a full bucket, the fresh state.
const DEFICIT = 0;
const LAST = 1;

/**
 * The most a bucket owes: usage past its tokens is debt, counted up to one burst past empty
 * (then the bucket is full again two refills of its burst later at most), as a window's overuse
 * is forgotten when the window ends. Kept exact below 2^53.
 */
export function maxDeficit(limit: CompiledLimit): number {
  return Math.min(2 * limit.capacity * limit.windowMs, Number.MAX_SAFE_INTEGER);
}

/**
 * The deficit of a bucket of `to` that holds the tokens a deficit of `from` left (a changed burst):
 * within the new burst, and owing no more than the new bucket can owe.
 */
export function keptTokens(from: CompiledLimit, deficit: number, to: CompiledLimit): number {
  const tokens = from.capacity * from.windowMs - deficit;
  const full = to.capacity * to.windowMs;
  return Math.min(full - Math.min(tokens, full), maxDeficit(to));
}

export const tokenBucket: LimitAlgorithm = {
  slots: () => 2,

  sync(s, o, limit, now) {
    const last = s[o + LAST]!;
    if (now <= last) {
      // The clock stepped back: refill goes on from now, what is owed is owed from now.
      if (now < last) s[o + LAST] = now;
      return;
    }
    const deficit = s[o + DEFICIT]!;
    if (deficit > 0) {
      const refill = (now - last) * limit.limit;
      s[o + DEFICIT] = refill >= deficit ? 0 : deficit - refill;
    }
    s[o + LAST] = now;
  },

  syncedAt: (s, o) => s[o + LAST]!,

  available: (s, o, limit) =>
    Math.floor((limit.capacity * limit.windowMs - s[o + DEFICIT]!) / limit.windowMs),

  charge(s, o, limit, _now, cost) {
    const deficit = s[o + DEFICIT]!;
    const next = deficit + cost * limit.windowMs;
    const max = maxDeficit(limit);
    s[o + DEFICIT] = next <= max ? next : Math.max(max, deficit);
  },

  refund(s, o, limit, _chargedAt, cost) {
    s[o + DEFICIT] = Math.max(0, s[o + DEFICIT]! - cost * limit.windowMs);
  },

  retryAfter(s, o, limit, _now, cost) {
    const need = s[o + DEFICIT]! + cost * limit.windowMs - limit.capacity * limit.windowMs;
    if (need <= 0) return 0;
    let ms = Math.ceil(need / limit.limit);
    if (ms * limit.limit < need) ms++;
    return ms;
  },

  used: (s, o, limit) =>
    limit.capacity -
    Math.floor((limit.capacity * limit.windowMs - s[o + DEFICIT]!) / limit.windowMs),

  resetMs: (s, o, limit) => Math.ceil(s[o + DEFICIT]! / limit.limit),

  windowStart: (_s, _o, limit, now) => now - (now % limit.windowMs),

  idleAt(s, o, limit) {
    const deficit = s[o + DEFICIT]!;
    return deficit > 0 ? s[o + LAST]! + Math.ceil(deficit / limit.limit) : 0;
  },

  stateProblem(s, o, limit) {
    const deficit = s[o + DEFICIT]!;
    if (!isCount(deficit) || deficit > maxDeficit(limit)) {
      return `deficit: must be an integer from 0 to ${maxDeficit(limit)} (one burst owed)`;
    }
    if (!isInstant(s[o + LAST]!)) return 'lastRefill: must be an instant (epoch ms)';
    return undefined;
  },
};
