import { ROW_APPROVED, ROW_DENIED, ROW_STATS_WINDOW, type CompiledQuota } from '../quota/compile';

/** When a key's row stops holding information (counts of the stats window included). */
export function rowIdleAt(q: CompiledQuota, s: Float64Array, base: number): number {
  let idle = 0;
  for (const l of q.limits) idle = Math.max(idle, l.impl.idleAt(s, base + l.offset, l));
  const first = q.limits[0];
  if (first !== undefined && s[base + ROW_APPROVED]! + s[base + ROW_DENIED]! > 0) {
    idle = Math.max(idle, s[base + ROW_STATS_WINDOW]! + first.windowMs);
  }
  return idle;
}
