import { SCOPES, type Scope } from '../quota-spec';
import type { QuotaCount, StatsReport } from './control-messages';

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isScope(value: unknown): value is Scope {
  return (SCOPES as readonly unknown[]).includes(value);
}

/** A replica id is a UUID; quota names are at most 128 characters (room for what may come). */
const MAX_REPLICA_LENGTH = 128;
const MAX_QUOTA_LENGTH = 256;

function parseQuotaCount(value: unknown): QuotaCount | undefined {
  if (!isRecord(value)) return undefined;
  const { quota, approved, denied, queued, activeKeys, scope } = value;
  if (typeof quota !== 'string' || quota === '' || quota.length > MAX_QUOTA_LENGTH)
    return undefined;
  if (!isCount(approved) || !isCount(denied) || !isCount(queued) || !isCount(activeKeys)) {
    return undefined;
  }
  if (scope !== undefined && !isScope(scope)) return undefined;
  const count = { quota, approved, denied, queued, activeKeys };
  return scope === undefined ? count : { ...count, scope };
}

/**
 * A StatsReport as a limiter published it on ControlNames.statsReport, or undefined when `data`
 * is not one (a bad entry spoils the whole report).
 */
export function parseStatsReport(data: Uint8Array): StatsReport | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const { replica, at, quotas } = value;
  if (typeof replica !== 'string' || replica === '' || replica.length > MAX_REPLICA_LENGTH) {
    return undefined;
  }
  if (typeof at !== 'number' || !Number.isFinite(at)) return undefined;
  if (!Array.isArray(quotas)) return undefined;
  const counts: QuotaCount[] = [];
  for (const entry of quotas) {
    const count = parseQuotaCount(entry);
    if (count === undefined) return undefined;
    counts.push(count);
  }
  return { replica, at, quotas: counts };
}
