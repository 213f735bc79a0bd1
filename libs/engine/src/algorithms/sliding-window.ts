import type { CompiledLimit, LimitAlgorithm } from './algorithm';
import { isCount, isIntegerUpTo, MAX_INSTANT } from './state-check';

// The sub-bucket regime of sliding_window, for limits too large for an exact log (sliding-log.ts;
// compile.ts decides). Row: [headBucket, total, ring of `ringSize` sub-bucket counts]. Time is cut
// into sub-buckets of bucketMs = ceil(windowMs / precision); a decision at bucket K counts buckets
// K-ringSize+1..K, which cover every instant of (now - windowMs, now]. Counting the oldest
// sub-bucket whole is what makes the guarantee exact: in ANY interval of windowMs, admitted cost
// <= limit. The price is at most one sub-bucket (windowMs / precision) of extra waiting, never an
// over-admission.
const HEAD = 0;
const TOTAL = 1;
const RING = 2;

function bucketOf(limit: CompiledLimit, t: number): number {
  return Math.floor(t / limit.bucketMs);
}

function slotOf(j: number, r: number): number {
  return ((j % r) + r) % r;
}

/**
 * The clock stepped back to bucket `k`, before the head: every cost of a later bucket was charged
 * no later than now, so it moves into bucket `k` (the total stays) and counts a window from now.
 */
function stepBack(s: Float64Array, o: number, limit: CompiledLimit, k: number, head: number) {
  const r = limit.ringSize;
  let moved = 0;
  for (let j = Math.max(k + 1, head - r + 1); j <= head; j++) {
    const at = o + RING + slotOf(j, r);
    moved += s[at]!;
    s[at] = 0;
  }
  // Buckets before the ring's oldest shared their slots with the ones just emptied: they read 0.
  const at = o + RING + slotOf(k, r);
  s[at] = s[at]! + moved;
  s[o + HEAD] = k;
}

export const slidingWindow: LimitAlgorithm = {
  slots: (limit) => RING + limit.ringSize,

  sync(s, o, limit, now) {
    const k = bucketOf(limit, now);
    const head = s[o + HEAD]!;
    if (k <= head) {
      if (k < head) stepBack(s, o, limit, k, head);
      return;
    }
    const r = limit.ringSize;
    if (k - head >= r) {
      for (let i = 0; i < r; i++) s[o + RING + i] = 0;
      s[o + TOTAL] = 0;
    } else {
      let total = s[o + TOTAL]!;
      for (let j = head + 1; j <= k; j++) {
        const at = o + RING + (j % r);
        total -= s[at]!;
        s[at] = 0;
      }
      s[o + TOTAL] = total;
    }
    s[o + HEAD] = k;
  },

  syncedAt: (s, o, limit) => s[o + HEAD]! * limit.bucketMs,

  available: (s, o, limit) => limit.limit - s[o + TOTAL]!,

  charge(s, o, limit, _now, cost) {
    const at = o + RING + (s[o + HEAD]! % limit.ringSize);
    s[at] = s[at]! + cost;
    s[o + TOTAL] = s[o + TOTAL]! + cost;
  },

  refund(s, o, limit, chargedAt, cost) {
    const k = bucketOf(limit, chargedAt);
    const head = s[o + HEAD]!;
    if (k > head || k <= head - limit.ringSize) return;
    const at = o + RING + (k % limit.ringSize);
    const back = Math.min(cost, s[at]!);
    s[at] = s[at]! - back;
    s[o + TOTAL] = s[o + TOTAL]! - back;
  },

  retryAfter(s, o, limit, now, cost) {
    const need = s[o + TOTAL]! + cost - limit.limit;
    if (need <= 0) return 0;
    const r = limit.ringSize;
    const head = s[o + HEAD]!;
    let freed = 0;
    // One modulo, not one per bucket: bucket numbers are beyond 2^31, where `%` is slow.
    let slot = slotOf(head + 1, r);
    for (let j = head - r + 1; j <= head; j++) {
      freed += s[o + RING + slot]!;
      // Bucket j stops counting once the head reaches j + r.
      if (freed >= need) return Math.max(1, (j + r) * limit.bucketMs - now);
      if (++slot === r) slot = 0;
    }
    return Math.max(1, (head + r) * limit.bucketMs - now);
  },

  used: (s, o) => s[o + TOTAL]!,

  resetMs(s, o, limit, now) {
    return s[o + TOTAL]! > 0 ? Math.max(0, slidingWindow.idleAt(s, o, limit) - now) : 0;
  },

  windowStart: (_s, _o, limit, now) => now - (now % limit.windowMs),

  idleAt(s, o, limit) {
    if (s[o + TOTAL]! <= 0) return 0;
    const r = limit.ringSize;
    const head = s[o + HEAD]!;
    // The newest non-empty bucket decides when everything has slid out.
    let slot = slotOf(head, r);
    for (let j = head; j > head - r; j--) {
      if (s[o + RING + slot]! > 0) return (j + r) * limit.bucketMs;
      slot = slot === 0 ? r - 1 : slot - 1;
    }
    return 0;
  },

  counted(s, o, limit, visit) {
    const r = limit.ringSize;
    const head = s[o + HEAD]!;
    for (let j = head - r + 1; j <= head; j++) {
      const cost = s[o + RING + slotOf(j, r)]!;
      if (cost > 0) visit((j + r) * limit.bucketMs, cost);
    }
  },

  chargeUntil(s, o, limit, _now, cost, until) {
    const r = limit.ringSize;
    const head = s[o + HEAD]!;
    // The first bucket that counts until `until`; a later one than the head cannot be written
    // (from a log dated ahead of the clock): the head counts longest.
    const k = Math.min(head, Math.ceil(until / limit.bucketMs) - r);
    if (k <= head - r || cost <= 0) return;
    const at = o + RING + slotOf(k, r);
    s[at] = s[at]! + cost;
    s[o + TOTAL] = s[o + TOTAL]! + cost;
  },

  stateProblem(s, o, limit) {
    const head = s[o + HEAD]!;
    if (!isIntegerUpTo(head, Math.floor(MAX_INSTANT / limit.bucketMs))) {
      return 'head: must be the sub-bucket of an instant';
    }
    let sum = 0;
    for (let i = 0; i < limit.ringSize; i++) {
      const cost = s[o + RING + i]!;
      if (!isCount(cost)) return `buckets[${i}]: must be an integer >= 0`;
      sum += cost;
    }
    return s[o + TOTAL] === sum ? undefined : 'total: must be the sum of the sub-buckets';
  },
};
