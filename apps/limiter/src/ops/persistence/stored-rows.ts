import type { ChangedRows, StoredLease } from '@app/engine';
import { idleInstant, type StoredKey } from './usage-store';
import type { WriteRequest } from './writer-thread';

/** One slice of changed rows as the writer thread takes it (typed arrays it can be handed). */
export function encodeSlice(rows: ChangedRows, takenAt: number): WriteRequest {
  const n = rows.keys.length;
  const idleAt = new Float64Array(n);
  const leaseRows: number[] = [];
  const leases: string[] = [];
  for (let i = 0; i < n; i++) {
    idleAt[i] = idleInstant(rows.idleAt[i]!);
    const held = rows.leases[i];
    if (held !== undefined) {
      leaseRows.push(i);
      leases.push(JSON.stringify(held));
    }
  }
  return {
    kind: 'write',
    takenAt,
    quotas: rows.quotas.map((q) => ({
      name: q.name,
      limits: JSON.stringify(q.limits),
      stride: q.stride,
    })),
    quota: Int32Array.from(rows.quota),
    keys: rows.keys,
    state: rows.state,
    idleAt,
    leaseRows,
    leases,
    gone: rows.gone,
  };
}

/** Every key of a slice, written or dropped, by quota (to mark them again after a failure). */
export function keysByQuota(rows: ChangedRows): Map<string, string[]> {
  const byQuota = new Map<string, string[]>();
  const add = (quota: string, keys: readonly string[]): void => {
    const list = byQuota.get(quota);
    if (list === undefined) byQuota.set(quota, [...keys]);
    else list.push(...keys);
  };
  for (const g of rows.gone) add(g.quota, g.keys);
  rows.keys.forEach((key, i) => add(rows.quotas[rows.quota[i]!]!.name, [key]));
  return byQuota;
}

function isLease(value: unknown): value is StoredLease {
  const l = value as Partial<Record<keyof StoredLease, unknown>> | null;
  return (
    typeof l === 'object' &&
    l !== null &&
    typeof l.id === 'string' &&
    typeof l.requestId === 'string' &&
    typeof l.expiresAt === 'number'
  );
}

/**
 * A stored key's numbers (into `state`, reused from key to key) and leases, or undefined when
 * they do not fit its layout.
 */
export function decodeStoredKey(
  [, , , stored, json]: StoredKey,
  state: Float64Array,
): StoredLease[] | undefined {
  if (!Buffer.isBuffer(stored) || stored.length !== state.length * 8) return undefined;
  // A copy: the driver's buffer need not be aligned for a Float64Array view.
  new Uint8Array(state.buffer, state.byteOffset, stored.length).set(stored);
  if (json === null) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  return Array.isArray(parsed) && parsed.every(isLease) ? parsed : undefined;
}
