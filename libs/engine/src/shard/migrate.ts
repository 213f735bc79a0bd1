import { keptTokens, type CompiledLimit } from '../algorithms';
import { ROW_HEADER } from '../quota/compile';

/**
 * Moves one key's state from an old layout of limits to a new one (a live quota change or a
 * snapshot taken under another config). Limits are matched by name. Same layout: the state is
 * copied as it is, so counts survive and a lowered limit binds at once. Another layout of the same
 * window that both algorithms can read and write by instant (sliding windows: another precision,
 * sub-buckets and a log): each cost keeps counting until at least when it did. Any other change:
 * the used amount is carried over as a charge at `now`. None of them ever admits more.
 */
export function convertRow(
  from: readonly CompiledLimit[],
  src: Float64Array,
  srcBase: number,
  to: readonly CompiledLimit[],
  dst: Float64Array,
  dstBase: number,
  now: number,
): void {
  for (let i = 0; i < ROW_HEADER; i++) dst[dstBase + i] = src[srcBase + i]!;
  for (const l of to) {
    const old = from.find((f) => f.name === l.name);
    if (old === undefined) continue;
    const so = srcBase + old.offset;
    const dO = dstBase + l.offset;
    if (old.layoutKey === l.layoutKey) {
      const n = l.impl.slots(l);
      for (let i = 0; i < n; i++) dst[dO + i] = src[so + i]!;
      if (l.algorithm === 'token_bucket' && old.capacity !== l.capacity) {
        dst[dO] = keptTokens(old, dst[dO]!, l);
      }
    } else {
      old.impl.sync(src, so, old, now);
      l.impl.sync(dst, dO, l, now);
      const { chargeUntil } = l.impl;
      if (old.impl.counted && chargeUntil && old.windowMs === l.windowMs) {
        old.impl.counted(src, so, old, (until, cost) => chargeUntil(dst, dO, l, now, cost, until));
      } else {
        const used = old.impl.used(src, so, old);
        if (used > 0) l.impl.charge(dst, dO, l, now, used);
      }
    }
  }
}
