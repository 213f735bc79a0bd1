import { isRequestId } from '@app/contracts';
import type { ChangedRows, StoredLease } from '@app/engine';
import { idleInstant } from './usage-store';
import type { WriteRequest } from './store-thread-body';

/** One slice of changed rows as the store thread takes it (typed arrays it can be handed). */
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

/** A lease as the engine writes it: ids it could have issued, an expiry in epoch ms. */
function isLease(value: unknown): value is StoredLease {
  const l = value as Partial<Record<keyof StoredLease, unknown>> | null;
  return (
    typeof l === 'object' &&
    l !== null &&
    typeof l.id === 'string' &&
    isRequestId(l.id) &&
    typeof l.requestId === 'string' &&
    isRequestId(l.requestId) &&
    typeof l.expiresAt === 'number' &&
    Number.isSafeInteger(l.expiresAt) &&
    l.expiresAt >= 0
  );
}

/** Stored leases of a key, or undefined when the text is not a list of leases. */
export function parseLeases(json: string): StoredLease[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  return Array.isArray(parsed) && parsed.every(isLease) ? parsed : undefined;
}
