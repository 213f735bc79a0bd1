import { SnapshotError } from './errors';
import {
  compileStoredQuota,
  storedLimits,
  type CompiledQuota,
  type StoredLimitSpec,
} from './quota/compile';
import type { Shard, TableState } from './shard/shard';
import { storedRowProblem } from './shard/stored-row';

export interface LeaseSnapshot {
  readonly key: string;
  readonly id: string;
  readonly requestId: string;
  readonly expiresAt: number;
}

export interface QuotaSnapshot {
  readonly name: string;
  /** The enforced limits when the snapshot was taken, in row order (sliding logs marked). */
  readonly limits: readonly StoredLimitSpec[];
  readonly stride: number;
  readonly keys: readonly string[];
  /** keys.length rows of `stride` numbers, one after the other. */
  readonly rows: readonly number[];
  readonly leases: readonly LeaseSnapshot[];
}

/**
 * Plain JSON: counters survive a restart, and a config change in between (matched by limit name).
 * Version 2: rows lost their timer slot (v1 is refused).
 */
export interface EngineSnapshot {
  readonly version: 2;
  readonly takenAt: number;
  readonly quotas: readonly QuotaSnapshot[];
}

export function snapshotOf(
  quotas: readonly { quota: CompiledQuota; tables: readonly TableState[] }[],
  now: number,
): EngineSnapshot {
  return {
    version: 2,
    takenAt: now,
    quotas: quotas.map(({ quota, tables }) => {
      const keys: string[] = [];
      const rows: number[] = [];
      const leases: LeaseSnapshot[] = [];
      for (const t of tables) {
        t.keys.keys.forEach((key, row) => {
          if (key === undefined) return;
          keys.push(key);
          const base = row * quota.stride;
          for (let i = 0; i < quota.stride; i++) rows.push(t.keys.rows[base + i]!);
        });
        for (const [key, extras] of t.extras) {
          for (const l of extras.leases?.values() ?? []) {
            if (l.expiresAt > now)
              leases.push({ key, id: l.id, requestId: l.requestId, expiresAt: l.expiresAt });
          }
        }
      }
      return {
        name: quota.name,
        limits: storedLimits(quota),
        stride: quota.stride,
        keys,
        rows,
        leases,
      };
    }),
  };
}

/** Loads `snapshot`; returns the keys left out because their numbers are impossible. */
export function restoreInto(
  snapshot: EngineSnapshot,
  now: number,
  findQuota: (name: string) => CompiledQuota | undefined,
  tableOf: (q: CompiledQuota, key: string) => [Shard, TableState, number],
): number {
  const quotas: unknown = (snapshot as Partial<EngineSnapshot> | undefined)?.quotas;
  if (snapshot?.version !== 2 || !Array.isArray(quotas)) {
    throw new SnapshotError('snapshot: unsupported version');
  }
  let unreadable = 0;
  for (const qs of quotas as readonly QuotaSnapshot[]) {
    const q = findQuota(qs.name);
    if (q === undefined) continue;
    const from = compileStoredQuota(qs.name, qs.limits);
    if (from.stride !== qs.stride || qs.rows.length !== qs.keys.length * qs.stride) {
      throw new SnapshotError(`snapshot: quota ${qs.name} has rows that do not match its limits`);
    }
    const rows = Float64Array.from(qs.rows);
    const leasesByKey = new Map<string, LeaseSnapshot[]>();
    for (const l of qs.leases) {
      const list = leasesByKey.get(l.key) ?? [];
      list.push(l);
      leasesByKey.set(l.key, list);
    }
    qs.keys.forEach((key: string, i: number) => {
      if (storedRowProblem(from.limits, rows, i * qs.stride) !== undefined) {
        unreadable++;
        return;
      }
      const [shard, table, hash] = tableOf(q, key);
      shard.load(
        table,
        key,
        hash,
        from.limits,
        rows,
        i * qs.stride,
        leasesByKey.get(key) ?? [],
        now,
      );
    });
  }
  return unreadable;
}
