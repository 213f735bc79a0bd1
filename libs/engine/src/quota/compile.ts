import { algorithmFor, type CompiledLimit } from '../algorithms';
import { slidingLog } from '../algorithms/sliding-log';
import { InvalidQuotaError } from '../errors';
import { quotaSeed } from '../hash/fnv1a';
import { CalendarWindows, isValidTimeZone } from '../time/calendar';
import type { ConcurrencySpec, LimitSpec, QueueSpec, QuotaSpec } from '../types';

const DAY_MS = 86_400_000;
/**
 * The longest a request may wait in a queue: a day, the longest a NATS reply stays allowed
 * (k8s/nats/nats.conf) and under what one timer can hold (2^31 - 1 ms).
 */
export const MAX_QUEUE_WAIT_MS = DAY_MS;
const UNIT = /^[a-z][a-z0-9_]*$/;
export const DEFAULT_PRECISION = 10;
/** Entries an exact sliding log holds at most: a sliding_window that would need more keeps sub-buckets. */
export const MAX_LOG_SIZE = 64;

/**
 * A sliding_window kept as an exact log of `size` entries, each one unit of cost (`units`) or an
 * (instant, cost) pair.
 */
export interface SlidingLog {
  readonly size: number;
  readonly units: boolean;
}

/** A limit as rows were stored under it: `log` is set on the sliding windows that kept a log. */
export interface StoredLimitSpec extends LimitSpec {
  readonly log?: SlidingLog;
}

/** Row header before the limits' state: [statsWindowStart, approved, denied]. */
export const ROW_STATS_WINDOW = 0;
export const ROW_APPROVED = 1;
export const ROW_DENIED = 2;
export const ROW_HEADER = 3;

/** A quota ready for the hot path. Immutable: a change compiles a new one. */
export interface CompiledQuota {
  readonly name: string;
  /** Slot of this quota's table in every shard; stable across changes, set by the engine. */
  table: number;
  readonly spec: QuotaSpec;
  /** Hash seed of the quota name, continued with the key to pick a shard. */
  readonly seed: number;
  /** Enforced limits (limit > 0); unlimited ones are skipped, as go-ratelimit does. */
  readonly limits: readonly CompiledLimit[];
  readonly stride: number;
  readonly queue: QueueSpec | undefined;
  readonly concurrency: ConcurrencySpec | undefined;
  readonly shadow: boolean;
  /** Reasons of refusals by the queue and the concurrency cap, made once. */
  readonly queueFull: string;
  readonly concurrencyReached: string;
}

function isInt(n: unknown, min: number): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= min;
}

function compileLimit(
  quota: string,
  spec: LimitSpec,
  i: number,
  offset: number,
  log: SlidingLog | undefined,
): CompiledLimit {
  const at = `limits[${i}]`;
  const fail = (field: string, msg: string): never => {
    throw new InvalidQuotaError(quota, `${at}.${field}`, msg);
  };
  if (typeof spec.name !== 'string' || spec.name.length === 0)
    fail('name', 'must be a non-empty string');
  if (typeof spec.unit !== 'string' || !UNIT.test(spec.unit))
    fail('unit', 'must be a lowercase word');
  // Costs are looked up as cost[unit]: a name every object inherits would always be found.
  if (spec.unit in Object.prototype) fail('unit', `${JSON.stringify(spec.unit)} is reserved`);
  if (!isInt(spec.limit, 0)) fail('limit', 'must be an integer >= 0');
  if (!isInt(spec.windowMs, 1)) fail('windowMs', 'must be an integer >= 1');
  let impl = algorithmFor(spec.algorithm);
  if (!impl) fail('algorithm', 'must be fixed_window, sliding_window or token_bucket');
  let capacity = spec.limit;
  if (spec.burst !== undefined) {
    if (spec.algorithm !== 'token_bucket') fail('burst', 'applies to token_bucket only');
    if (!isInt(spec.burst, 1)) fail('burst', 'must be an integer >= 1');
    capacity = spec.burst;
  }
  if (spec.algorithm === 'token_bucket' && capacity * spec.windowMs > Number.MAX_SAFE_INTEGER) {
    fail('burst', 'burst x windowMs must stay below 2^53 so refills stay exact');
  }
  let calendar: CalendarWindows | undefined;
  if (spec.align !== undefined) {
    if (spec.align !== 'calendar') fail('align', 'must be "calendar"');
    if (spec.algorithm !== 'fixed_window') fail('align', 'calendar alignment needs fixed_window');
    if (spec.windowMs % DAY_MS !== 0) fail('windowMs', 'calendar windows are whole days');
    const tz = spec.timezone ?? 'UTC';
    if (!isValidTimeZone(tz)) fail('timezone', `unknown IANA time zone ${JSON.stringify(tz)}`);
    calendar = new CalendarWindows(spec.windowMs / DAY_MS, tz);
  } else if (spec.timezone !== undefined) {
    fail('timezone', 'needs align: calendar');
  }
  let bucketMs = spec.windowMs;
  let ringSize = 1;
  if (spec.precision !== undefined && spec.algorithm !== 'sliding_window') {
    fail('precision', 'applies to sliding_window only');
  }
  if (spec.algorithm === 'sliding_window') {
    const precision = spec.precision ?? DEFAULT_PRECISION;
    if (!isInt(precision, 1) || precision > 120) fail('precision', 'must be an integer 1..120');
    if (log === undefined) {
      bucketMs = Math.ceil(spec.windowMs / precision);
      // Enough sub-buckets to cover every instant of (now - windowMs, now].
      ringSize = Math.ceil((spec.windowMs - 1) / bucketMs) + 1;
    } else {
      impl = slidingLog;
    }
  }
  const layout =
    log === undefined
      ? `${spec.algorithm}/${spec.windowMs}/${bucketMs}/${ringSize}/${calendar ? (spec.timezone ?? 'UTC') : ''}`
      : // Read back by the cluster script (lua/adopt.lua) when a limit changes layout.
        `sliding_window/${spec.windowMs}/${log.units ? 'units' : 'costs'}/${log.size}/`;
  return {
    name: spec.name,
    unit: spec.unit,
    algorithm: spec.algorithm,
    capacity,
    limit: spec.limit,
    windowMs: spec.windowMs,
    impl,
    offset,
    calendar,
    bucketMs,
    ringSize,
    logSize: log?.size ?? 0,
    logUnits: log?.units ?? false,
    layoutKey: layout,
    reached: `limit ${spec.name} reached`,
  };
}

function checkQueue(quota: string, q: QueueSpec | undefined): QueueSpec | undefined {
  if (q === undefined) return undefined;
  if (!isInt(q.maxSize, 0))
    throw new InvalidQuotaError(quota, 'queue.maxSize', 'must be an integer >= 0');
  if (!isInt(q.maxWaitMs, 0) || q.maxWaitMs > MAX_QUEUE_WAIT_MS) {
    throw new InvalidQuotaError(
      quota,
      'queue.maxWaitMs',
      `must be an integer from 0 to ${MAX_QUEUE_WAIT_MS} (a day)`,
    );
  }
  return q.maxSize > 0 && q.maxWaitMs > 0 ? q : undefined;
}

function checkConcurrency(
  quota: string,
  c: ConcurrencySpec | undefined,
): ConcurrencySpec | undefined {
  if (c === undefined) return undefined;
  if (!isInt(c.max, 1))
    throw new InvalidQuotaError(quota, 'concurrency.max', 'must be an integer >= 1');
  if (!isInt(c.leaseTtlMs, 1)) {
    throw new InvalidQuotaError(quota, 'concurrency.leaseTtlMs', 'must be an integer >= 1');
  }
  return c;
}

/** A limit of requests small enough to log every request bounds the admissions of its window. */
function boundsAdmissions(l: LimitSpec): boolean {
  return (
    l.algorithm === 'sliding_window' &&
    l.unit === 'requests' &&
    isInt(l.limit, 1) &&
    l.limit <= MAX_LOG_SIZE &&
    isInt(l.windowMs, 1)
  );
}

/**
 * Which sliding_window limits of a quota keep an exact log instead of sub-buckets, decided from
 * the quota alone (issue 14). A limit of `requests` of at most MAX_LOG_SIZE: one entry per
 * request. Any other sliding limit when such a limit over a window at least as long bounds how
 * many requests its window admits: one (instant, cost) entry per admission, that many entries.
 */
export function slidingLogs(limits: readonly LimitSpec[]): (SlidingLog | undefined)[] {
  return limits.map((l) => {
    if (l.algorithm !== 'sliding_window' || !isInt(l.limit, 1)) return undefined;
    if (boundsAdmissions(l)) return { size: l.limit, units: true };
    let bound = Infinity;
    for (const b of limits) {
      if (boundsAdmissions(b) && b.windowMs >= l.windowMs) bound = Math.min(bound, b.limit);
    }
    return bound <= MAX_LOG_SIZE ? { size: bound, units: false } : undefined;
  });
}

/** The log a stored limit says its rows kept (absent: sub-buckets, as rows stored before logs). */
function storedLog(quota: string, spec: StoredLimitSpec, i: number): SlidingLog | undefined {
  const log: unknown = spec.log;
  if (log === undefined) return undefined;
  const { size, units } = (log ?? {}) as Partial<SlidingLog>;
  if (
    spec.algorithm !== 'sliding_window' ||
    !isInt(size, 1) ||
    size > MAX_LOG_SIZE ||
    typeof units !== 'boolean'
  ) {
    throw new InvalidQuotaError(quota, `limits[${i}].log`, 'is not a sliding log');
  }
  return { size, units };
}

export function compileQuota(spec: QuotaSpec): CompiledQuota {
  return compile(spec, slidingLogs(Array.isArray(spec.limits) ? spec.limits : []));
}

/**
 * A quota as rows were stored under it (a snapshot, a persisted layout): each sliding window in
 * the regime the rows were written in, whatever the rule decides today.
 */
export function compileStoredQuota(
  name: string,
  limits: readonly StoredLimitSpec[],
): CompiledQuota {
  const given: unknown = limits;
  const logs = Array.isArray(given) ? limits.map((l, i) => storedLog(name, l, i)) : [];
  return compile({ name, limits }, logs);
}

/** The enforced limits as rows are stored under them: the sliding windows that keep a log say so. */
export function storedLimits(q: CompiledQuota): StoredLimitSpec[] {
  return q.spec.limits
    .filter((l) => l.limit > 0)
    .map((spec, i) => {
      const l = q.limits[i]!;
      return l.logSize > 0 ? { ...spec, log: { size: l.logSize, units: l.logUnits } } : spec;
    });
}

function compile(spec: QuotaSpec, logs: readonly (SlidingLog | undefined)[]): CompiledQuota {
  const name = spec.name;
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidQuotaError(String(name), 'name', 'must be a non-empty string');
  }
  const merge: unknown = spec.merge;
  if (
    merge !== undefined &&
    (typeof merge !== 'object' ||
      merge === null ||
      Object.values(merge).some((entry) => typeof entry !== 'string'))
  ) {
    throw new InvalidQuotaError(name, 'merge', 'must map fields to quota names');
  }
  const overrides: unknown = spec.clientOverrides;
  if (overrides !== undefined && typeof overrides !== 'boolean') {
    throw new InvalidQuotaError(name, 'clientOverrides', 'must be true or false');
  }
  const limitsField: unknown = spec.limits;
  if (!Array.isArray(limitsField)) throw new InvalidQuotaError(name, 'limits', 'must be an array');
  const seen = new Set<string>();
  const limits: CompiledLimit[] = [];
  let offset = ROW_HEADER;
  spec.limits.forEach((l, i) => {
    if (seen.has(l.name)) throw new InvalidQuotaError(name, `limits[${i}].name`, 'is not unique');
    seen.add(l.name);
    const compiled = compileLimit(name, l, i, offset, logs[i]);
    if (compiled.limit > 0) {
      limits.push(compiled);
      offset += compiled.impl.slots(compiled);
    }
  });
  const queue = checkQueue(name, spec.queue);
  const concurrency = checkConcurrency(name, spec.concurrency);
  return {
    name,
    table: -1,
    spec,
    seed: quotaSeed(name),
    limits,
    stride: offset,
    queue,
    concurrency,
    shadow: spec.shadow === true,
    queueFull: `queue of ${queue?.maxSize ?? 0} is full`,
    concurrencyReached: `concurrency max ${concurrency?.max ?? 0} reached`,
  };
}
