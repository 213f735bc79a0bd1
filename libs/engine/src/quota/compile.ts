import { algorithmFor, type CompiledLimit } from '../algorithms';
import { InvalidQuotaError } from '../errors';
import { quotaSeed } from '../hash/fnv1a';
import { CalendarWindows, isValidTimeZone } from '../time/calendar';
import type { ConcurrencySpec, LimitSpec, QueueSpec, QuotaSpec } from '../types';

const DAY_MS = 86_400_000;
const UNIT = /^[a-z][a-z0-9_]*$/;
export const DEFAULT_PRECISION = 10;

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
}

function isInt(n: unknown, min: number): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= min;
}

function compileLimit(quota: string, spec: LimitSpec, i: number, offset: number): CompiledLimit {
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
  const impl = algorithmFor(spec.algorithm);
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
    bucketMs = Math.ceil(spec.windowMs / precision);
    // Enough sub-buckets to cover every instant of (now - windowMs, now].
    ringSize = Math.ceil((spec.windowMs - 1) / bucketMs) + 1;
  }
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
    layoutKey: `${spec.algorithm}/${spec.windowMs}/${bucketMs}/${ringSize}/${calendar ? (spec.timezone ?? 'UTC') : ''}`,
  };
}

function checkQueue(quota: string, q: QueueSpec | undefined): QueueSpec | undefined {
  if (q === undefined) return undefined;
  if (!isInt(q.maxSize, 0))
    throw new InvalidQuotaError(quota, 'queue.maxSize', 'must be an integer >= 0');
  if (!isInt(q.maxWaitMs, 0))
    throw new InvalidQuotaError(quota, 'queue.maxWaitMs', 'must be an integer >= 0');
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

export function compileQuota(spec: QuotaSpec): CompiledQuota {
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
  const limitsField: unknown = spec.limits;
  if (!Array.isArray(limitsField)) throw new InvalidQuotaError(name, 'limits', 'must be an array');
  const seen = new Set<string>();
  const limits: CompiledLimit[] = [];
  let offset = ROW_HEADER;
  spec.limits.forEach((l, i) => {
    if (seen.has(l.name)) throw new InvalidQuotaError(name, `limits[${i}].name`, 'is not unique');
    seen.add(l.name);
    const compiled = compileLimit(name, l, i, offset);
    if (compiled.limit > 0) {
      limits.push(compiled);
      offset += compiled.impl.slots(compiled);
    }
  });
  return {
    name,
    table: -1,
    spec,
    seed: quotaSeed(name),
    limits,
    stride: offset,
    queue: checkQueue(name, spec.queue),
    concurrency: checkConcurrency(name, spec.concurrency),
    shadow: spec.shadow === true,
  };
}
