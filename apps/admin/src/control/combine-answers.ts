import {
  KeyStatsSchema,
  type KeyStats,
  type LimitStats,
  type ReplicaAnswer,
  type Scope,
} from '@app/contracts';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/** A key's stats gathered from every live limiter replica (GraphQL `keyStats`). */
export interface KeyStatsResult {
  /** Replicas that answered. */
  replicas: number;
  /** Absent when no replica could answer: see `code` / `reason`. */
  stats?: KeyStats;
  /** `cluster` when the counts come from Redis (then they are not summed). */
  scope?: Scope;
  /** Every replica refused (UNKNOWN_QUOTA, INVALID_REQUEST), or UNAVAILABLE. */
  code?: string;
  reason?: string;
}

/** A key reset sent to every live limiter replica (GraphQL `resetKey`). */
export interface ResetKeyResult {
  replicas: number;
  /** At least one replica held and forgot counts for the key. */
  reset: boolean;
  code?: string;
  reason?: string;
}

/** What a replica's answer must look like; anything else is dropped as malformed. */
export function parseReplicaAnswer<T>(
  data: Uint8Array,
  isValue: (value: unknown) => value is T,
): ReplicaAnswer<T> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(
      Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'),
    );
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { replica, scope, value, code, reason } = parsed as Record<string, unknown>;
  if (typeof replica !== 'string' || replica === '') return undefined;
  if (scope !== undefined && scope !== 'local' && scope !== 'cluster') return undefined;
  if (code !== undefined && (typeof code !== 'string' || code === '')) return undefined;
  const why = typeof reason === 'string' ? reason : undefined;
  if (code !== undefined) return { replica, scope, code, reason: why };
  if (!isValue(value)) return undefined;
  return { replica, scope, value };
}

const keyStatsCheck = TypeCompiler.Compile(KeyStatsSchema);

export function isKeyStats(value: unknown): value is KeyStats {
  return keyStatsCheck.Check(value);
}

export function isBoolean(value: unknown): value is boolean {
  return typeof value === 'boolean';
}

const NO_ANSWER = 'no limiter replica answered';

/** The refusal most replicas gave (the first one seen on a tie). */
function commonRefusal(answers: readonly ReplicaAnswer<unknown>[]): {
  code: string;
  reason?: string;
} {
  const byCode = new Map<string, { count: number; reason?: string }>();
  for (const { code, reason } of answers) {
    if (code === undefined) continue;
    const seen = byCode.get(code);
    if (seen === undefined) byCode.set(code, { count: 1, reason });
    else seen.count++;
  }
  let best: { code: string; count: number; reason?: string } | undefined;
  for (const [code, { count, reason }] of byCode) {
    if (best === undefined || count > best.count) best = { code, count, reason };
  }
  if (best === undefined) return { code: 'UNAVAILABLE', reason: NO_ANSWER };
  return best.reason === undefined ? { code: best.code } : { code: best.code, reason: best.reason };
}

/**
 * One view of a key from every replica's answer, in arrival order:
 * - no answer: UNAVAILABLE; every answer a refusal: the refusal most replicas gave;
 * - any `cluster` answer: every replica read the same Redis state, so the counts are not summed:
 *   the last cluster answer to arrive (the latest read) is taken as is, except `queued`, which
 *   counts each replica's own waiters and is summed over every answer;
 * - `local` answers: each replica counts only what it admitted, so `used`, `approved`, `denied`,
 *   `queued` and `inFlight` are summed (limits matched by name), `remaining` is recomputed as
 *   `max(0, limit - used)` and `resetMs` is the longest.
 */
export function combineKeyStats(answers: readonly ReplicaAnswer<KeyStats>[]): KeyStatsResult {
  const replicas = answers.length;
  if (replicas === 0) return { replicas, code: 'UNAVAILABLE', reason: NO_ANSWER };
  const values = answers.filter(
    (a): a is ReplicaAnswer<KeyStats> & { value: KeyStats } =>
      a.code === undefined && a.value !== undefined,
  );
  if (values.length === 0) return { replicas, ...commonRefusal(answers) };

  const queued = values.reduce((sum, a) => sum + a.value.queued, 0);
  const cluster = values.filter((a) => a.scope === 'cluster');
  const newest = cluster[cluster.length - 1];
  if (newest !== undefined) {
    return {
      replicas,
      scope: 'cluster',
      stats: { ...newest.value, limits: newest.value.limits.map((l) => ({ ...l })), queued },
    };
  }
  return { replicas, scope: 'local', stats: sumLocal(values.map((a) => a.value)) };
}

function sumLocal(values: readonly KeyStats[]): KeyStats {
  const first = values[0];
  if (first === undefined) throw new Error('sumLocal needs at least one answer');
  const limits = new Map<string, LimitStats>();
  let queued = 0;
  let inFlight = 0;
  let approved = 0;
  let denied = 0;
  for (const stats of values) {
    queued += stats.queued;
    inFlight += stats.inFlight;
    approved += stats.approved;
    denied += stats.denied;
    for (const limit of stats.limits) {
      const sum = limits.get(limit.name);
      if (sum === undefined) {
        limits.set(limit.name, { ...limit });
      } else {
        sum.limit = Math.max(sum.limit, limit.limit);
        sum.used += limit.used;
        sum.remaining = Math.max(sum.remaining, limit.remaining);
        sum.resetMs = Math.max(sum.resetMs, limit.resetMs);
      }
    }
  }
  for (const limit of limits.values()) {
    // limit 0 is unlimited: there is nothing to subtract from, keep what the replicas said.
    if (limit.limit > 0) limit.remaining = Math.max(0, limit.limit - limit.used);
  }
  return {
    key: first.key,
    quota: first.quota,
    limits: [...limits.values()],
    queued,
    inFlight,
    approved,
    denied,
  };
}

/** A reset is done when at least one replica says so; every answer a refusal: that refusal. */
export function combineReset(answers: readonly ReplicaAnswer<boolean>[]): ResetKeyResult {
  const replicas = answers.length;
  if (replicas === 0) return { replicas, reset: false, code: 'UNAVAILABLE', reason: NO_ANSWER };
  const values = answers.filter((a) => a.code === undefined && a.value !== undefined);
  if (values.length === 0) return { replicas, reset: false, ...commonRefusal(answers) };
  return { replicas, reset: values.some((a) => a.value === true) };
}
