import { rowIdleAt } from './shard/idle';
import type { Shard } from './shard/shard';

/**
 * Paged listing of the keys the engine holds (GoCC's `GET /debug`), in bounded slices so a
 * million keys never cost one long call. Pure: no I/O, `now` is a parameter.
 */

/** Where a listing stands: plain numbers, so a host can hand it to a client and take it back. */
export interface KeyListCursor {
  readonly shard: number;
  readonly table: number;
  readonly row: number;
}

export interface HeldKey {
  readonly quota: string;
  readonly key: string;
}

/** Row slots and tables looked at per key asked for, holes included: sparse tables stay bounded. */
const SCAN_PER_KEY = 16;
const MIN_SCAN = 1_024;

/**
 * At most `maxKeys` keys that still hold information (idle rows the next sweep drops are skipped;
 * a key's own limits are information),
 * resuming at `from`; `next` is undefined once every table was passed. Not a snapshot: a key
 * created, dropped or moved by compaction between two calls may be missed or listed twice.
 */
export function listHeldKeys(
  shards: readonly Shard[],
  maxKeys: number,
  now: number,
  from: KeyListCursor | undefined,
): { keys: HeldKey[]; next: KeyListCursor | undefined } {
  const keys: HeldKey[] = [];
  const scanBudget = Math.max(MIN_SCAN, maxKeys * SCAN_PER_KEY);
  let scanned = 0;
  let resume = from;
  for (let s = resume?.shard ?? 0; s < shards.length; s++) {
    const tables = shards[s]!.tables;
    for (let ti = resume?.table ?? 0; ti < tables.length; ti++) {
      let row = resume?.row ?? 0;
      resume = undefined;
      // Tables count too: many quotas over many shards must not make one call long either.
      if (scanned >= scanBudget) return { keys, next: { shard: s, table: ti, row } };
      scanned++;
      const t = tables[ti];
      if (t === undefined || t.keys.size === 0) continue;
      const q = t.quota;
      const table = t.keys;
      for (; row < table.keys.length; row++) {
        if (keys.length >= maxKeys || scanned >= scanBudget) {
          return { keys, next: { shard: s, table: ti, row } };
        }
        scanned++;
        const key = table.keys[row];
        if (key === undefined) continue;
        const held = t.extras.has(key) || table.ownAt(row) !== undefined;
        if (!held && rowIdleAt(q, table.rows, row * q.stride) <= now) continue;
        keys.push({ quota: q.name, key });
      }
    }
    resume = undefined;
  }
  return { keys, next: undefined };
}
