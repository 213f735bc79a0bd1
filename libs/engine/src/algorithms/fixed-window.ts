import type { CompiledLimit, LimitAlgorithm } from './algorithm';

// Row: [windowStart, windowEnd, used]. Windows are aligned to multiples of windowMs since the
// epoch (or to local midnight), so every replica and Redis agree on where a window starts.
const START = 0;
const END = 1;
const USED = 2;

function bounds(limit: CompiledLimit, now: number, s: Float64Array, o: number): void {
  if (limit.calendar) {
    const w = limit.calendar.at(now);
    s[o + START] = w.start;
    s[o + END] = w.end;
  } else {
    const start = now - (now % limit.windowMs);
    s[o + START] = start;
    s[o + END] = start + limit.windowMs;
  }
}

export const fixedWindow: LimitAlgorithm = {
  slots: () => 3,

  sync(s, o, limit, now) {
    if (now >= s[o + END]!) {
      bounds(limit, now, s, o);
      s[o + USED] = 0;
    }
  },

  available: (s, o, limit) => limit.limit - s[o + USED]!,

  charge(s, o, _limit, _now, cost) {
    s[o + USED] = s[o + USED]! + cost;
  },

  refund(s, o, _limit, chargedAt, cost) {
    // GoCC gives a released request back to the current window only; a charge from an
    // earlier window already expired, and giving it back here would over-admit.
    if (chargedAt >= s[o + START]! && chargedAt < s[o + END]!) {
      s[o + USED] = Math.max(0, s[o + USED]! - cost);
    }
  },

  retryAfter(s, o, limit, now, cost) {
    if (s[o + USED]! + cost <= limit.limit) return 0;
    return Math.max(1, s[o + END]! - now);
  },

  used: (s, o) => s[o + USED]!,

  resetMs: (s, o, _limit, now) => Math.max(0, s[o + END]! - now),

  windowStart: (s, o) => s[o + START]!,

  idleAt: (s, o) => (s[o + USED]! > 0 ? s[o + END]! : 0),
};
