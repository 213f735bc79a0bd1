import type { CompiledLimit, LimitAlgorithm } from './algorithm';
import { isCount, isInstant } from './state-check';

// Row: [windowStart, windowEnd, used]. Windows are aligned to multiples of windowMs since the
// epoch (or to local midnight), so every replica and Redis agree on where a window starts.
const START = 0;
const END = 1;
const USED = 2;

/** A calendar window is whole local days: DST moves its ends by at most this much per day. */
const CALENDAR_SLACK_PER_DAY_MS = 2 * 3_600_000;
const DAY_MS = 86_400_000;

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
    } else if (now < s[o + START]!) {
      // A window that starts after now: the clock stepped back. What it counts was charged no
      // later than now, so it counts in a window of the same length from now: a key is locked
      // one window at most, never until the clock comes back to that window's end.
      if (s[o + USED] === 0) {
        bounds(limit, now, s, o);
      } else {
        s[o + END] = now + (s[o + END]! - s[o + START]!);
        s[o + START] = now;
      }
    }
  },

  syncedAt: (s, o) => s[o + START]!,

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

  stateProblem(s, o, limit) {
    const start = s[o + START]!;
    const end = s[o + END]!;
    if (!isCount(s[o + USED]!)) return 'used: must be an integer >= 0';
    if (start === 0 && end === 0) return undefined;
    const length = end - start;
    // Aligned, or moved to start at a `now` by a clock step (sync): either way one window long.
    const slack = limit.calendar ? (CALENDAR_SLACK_PER_DAY_MS * limit.windowMs) / DAY_MS : 0;
    if (!isInstant(start) || !isInstant(end)) return 'window: must be instants (epoch ms)';
    if (length <= 0 || Math.abs(length - limit.windowMs) > slack) {
      return `window: must be ${limit.windowMs} ms long`;
    }
    return undefined;
  },
};
