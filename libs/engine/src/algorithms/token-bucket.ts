import type { LimitAlgorithm } from './algorithm';

// Row: [deficit, lastRefill]. The deficit (capacity minus tokens) is kept in units of
// 1/windowMs token, so refill (`elapsedMs * limit`) and charges stay exact integers: a retryAfter
// computed here is never off by a rounding error. Zero deficit is a full bucket, the fresh state.
const DEFICIT = 0;
const LAST = 1;

export const tokenBucket: LimitAlgorithm = {
  slots: () => 2,

  sync(s, o, limit, now) {
    const last = s[o + LAST]!;
    if (now <= last) return;
    const deficit = s[o + DEFICIT]!;
    if (deficit > 0) {
      const refill = (now - last) * limit.limit;
      s[o + DEFICIT] = refill >= deficit ? 0 : deficit - refill;
    }
    s[o + LAST] = now;
  },

  available: (s, o, limit) =>
    Math.floor((limit.capacity * limit.windowMs - s[o + DEFICIT]!) / limit.windowMs),

  charge(s, o, limit, _now, cost) {
    s[o + DEFICIT] = s[o + DEFICIT]! + cost * limit.windowMs;
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
};
