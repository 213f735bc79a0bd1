import { SCOPES, type Scope } from '../quota-spec';
import type { QuotaCount, StatsReport } from './control-messages';
import { MAX_TOP_REFUSED_KEY_LENGTH, TOP_REFUSED_K, type RefusedKey } from './top-refused';

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** A refusal count of one report period. */
const MAX_TALLY = 2 ** 40;

function isTally(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_TALLY;
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

function parseRefusedKey(value: unknown): RefusedKey | undefined {
  if (!isRecord(value)) return undefined;
  const { key, count, error } = value;
  if (typeof key !== 'string' || key === '' || key.length > MAX_TOP_REFUSED_KEY_LENGTH) {
    return undefined;
  }
  // Integers a sum over REPORT_BOUNDS.replicas keeps safe: refusals in one period are far fewer.
  if (!isTally(count) || !isTally(error) || error > count) return undefined;
  return { key, count, error };
}

/** At most TOP_REFUSED_K well-formed entries, or undefined (the report is spoilt). */
function parseTopRefused(value: unknown): RefusedKey[] | undefined {
  if (!Array.isArray(value) || value.length > TOP_REFUSED_K) return undefined;
  const keys: RefusedKey[] = [];
  for (const entry of value) {
    const key = parseRefusedKey(entry);
    if (key === undefined) return undefined;
    keys.push(key);
  }
  return keys;
}

function parseQuotaCount(value: unknown): QuotaCount | undefined {
  if (!isRecord(value)) return undefined;
  const { quota, approved, denied, queued, activeKeys, scope, topRefused } = value;
  if (typeof quota !== 'string' || quota === '' || quota.length > MAX_QUOTA_LENGTH)
    return undefined;
  if (!isCount(approved) || !isCount(denied) || !isCount(queued) || !isCount(activeKeys)) {
    return undefined;
  }
  if (scope !== undefined && !isScope(scope)) return undefined;
  const top = topRefused === undefined ? undefined : parseTopRefused(topRefused);
  if (topRefused !== undefined && top === undefined) return undefined;
  return {
    quota,
    approved,
    denied,
    queued,
    activeKeys,
    ...(scope !== undefined && { scope }),
    ...(top !== undefined && top.length > 0 && { topRefused: top }),
  };
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
