import { keptTokens, type CompiledLimit } from '../algorithms';
import type { CompiledQuota } from '../quota/compile';
import type { SharedKeyQuotas } from './key-limits';
import { KeyTable } from './key-table';
import { convertRow } from './migrate';
import type { KeyExtras } from './waiters';

/** The keys of one quota in this shard, with the counters the metrics read. */
export interface TableState {
  readonly index: number;
  quota: CompiledQuota;
  keys: KeyTable;
  readonly extras: Map<string, KeyExtras>;
  /** `quota` with keys' own numbers (key-limits.ts), shared by keys that ask for the same. */
  readonly keyQuotas: SharedKeyQuotas;
  approved: number;
  denied: number;
}

export function newTable(index: number, quota: CompiledQuota): TableState {
  return {
    index,
    quota,
    keys: new KeyTable(quota.stride),
    extras: new Map(),
    keyQuotas: new Map(),
    approved: 0,
    denied: 0,
  };
}

/** True when `to` keeps every limit of `from` at the same place with the same meaning. */
export function sameLayout(from: CompiledQuota, to: CompiledQuota): boolean {
  return (
    from.limits.length === to.limits.length &&
    from.limits.every((l, i) => {
      const n = to.limits[i]!;
      return l.name === n.name && l.layoutKey === n.layoutKey && l.offset === n.offset;
    })
  );
}

/** Every key's row laid out again for `to` (limits matched by name, counts kept). */
export function relayout(
  keys: KeyTable,
  from: CompiledQuota,
  to: CompiledQuota,
  now: number,
): KeyTable {
  const next = keys.successor(to.stride);
  for (let row = 0; row < keys.keys.length; row++) {
    const key = keys.keys[row];
    if (key === undefined) continue;
    const at = next.create(key, keys.hashOf(row));
    convertRow(
      from.limits,
      keys.rows,
      row * from.stride,
      to.limits,
      next.rows,
      at * to.stride,
      now,
    );
  }
  return next;
}

/** Token buckets keep their tokens when only the burst changed. */
export function adjustCapacities(
  from: readonly CompiledLimit[],
  to: readonly CompiledLimit[],
  keys: KeyTable,
): void {
  for (let i = 0; i < to.length; i++) {
    const a = from[i]!;
    const b = to[i]!;
    if (b.algorithm !== 'token_bucket' || a.capacity === b.capacity) continue;
    for (let row = 0; row < keys.keys.length; row++) {
      if (keys.keys[row] === undefined) continue;
      const at = row * keys.stride + b.offset;
      keys.rows[at] = keptTokens(a, keys.rows[at]!, b);
      keys.mark(row);
    }
  }
}
