import { DEFAULT_QUOTA_NAME, type QuotaSpec } from '../quota-spec';
import { ConfigError, type ConfigIssue } from './config-error';
import { formatDuration } from './duration';
import type { Env, EnvName } from '../env-variables';

/**
 * GoCC's three knobs (docs/contract.md, Environment: MAX_REQUESTS, MAX_REQUESTS_IN_QUEUE,
 * WINDOW_MILLIS).
 */
export interface GoccSettings {
  /** Per window; 0 means unlimited (the contract's `limit: 0`). */
  readonly maxRequests: number;
  readonly maxRequestsInQueue: number;
  readonly windowMillis: number;
}

export const GOCC_DEFAULTS: GoccSettings = {
  maxRequests: 100,
  maxRequestsInQueue: 400,
  windowMillis: 1000,
};

/**
 * How long a queued request may wait when nobody says otherwise: the contract's example value.
 * GoCC has no wait limit at all (a waiter leaves when its window opens or the client hangs up).
 */
export const DEFAULT_QUEUE_MAX_WAIT_MS = 30_000;
/** The longest wait a queue may have: a day (the engine's MAX_QUEUE_WAIT_MS). */
export const MAX_QUEUE_WAIT_MS = 86_400_000;

const NAMED_WINDOWS: ReadonlyMap<number, string> = new Map([
  [1000, 'rps'],
  [60_000, 'rpm'],
  [3_600_000, 'rph'],
  [86_400_000, 'rpd'],
]);

/** `rps`, `rpm`, `rph`, `rpd` for the usual windows, else `per_<duration>` (`per_250ms`). */
export function requestsLimitName(windowMs: number): string {
  return NAMED_WINDOWS.get(windowMs) ?? `per_${formatDuration(windowMs)}`;
}

/**
 * GoCC lets a waiter stay until a window admits it. A full queue drains in ceil(queue / limit)
 * windows, plus the window in progress; the wait limit is at least that, so a GoCC client is never
 * timed out where GoCC would have served it, and never below the 30 s default, nor above a day
 * (MAX_QUEUE_WAIT_MS: every wait has an end a timer and a NATS reply permission can hold).
 */
export function goccQueueMaxWaitMs(settings: GoccSettings): number {
  if (settings.maxRequests === 0 || settings.maxRequestsInQueue === 0) {
    return DEFAULT_QUEUE_MAX_WAIT_MS;
  }
  const windowsToDrain = Math.ceil(settings.maxRequestsInQueue / settings.maxRequests) + 1;
  const drainMs = windowsToDrain * settings.windowMillis;
  return Math.min(Math.max(DEFAULT_QUEUE_MAX_WAIT_MS, drainMs), MAX_QUEUE_WAIT_MS);
}

/**
 * A quota with GoCC semantics: one fixed window of requests and a FIFO queue. GoCC's own quotas
 * take client overrides (with REQUESTS_CAN_SET_RATE / _MOD_QUEUE), as GoCC's keys do.
 */
export function goccQuota(
  name: string,
  match: string | undefined,
  settings: GoccSettings,
): QuotaSpec {
  return {
    name,
    ...(match !== undefined && { match }),
    limits: [
      {
        name: requestsLimitName(settings.windowMillis),
        unit: 'requests',
        limit: settings.maxRequests,
        windowMs: settings.windowMillis,
        algorithm: 'fixed_window',
      },
    ],
    queue: { maxSize: settings.maxRequestsInQueue, maxWaitMs: goccQueueMaxWaitMs(settings) },
    clientOverrides: true,
  };
}

/** The `default` quota, serving every key no other quota claims. */
export function goccDefaultQuota(settings: GoccSettings = GOCC_DEFAULTS): QuotaSpec {
  return goccQuota(DEFAULT_QUOTA_NAME, undefined, settings);
}

const DECIMAL = /^[0-9]{1,15}$/;

/** Reads the three variables; unset or empty means the GoCC default. */
export function readGoccSettings(env: Env): GoccSettings {
  const issues: ConfigIssue[] = [];
  const read = (variable: EnvName, fallback: number, min: number): number => {
    const text = env[variable]?.trim();
    if (text === undefined || text === '') return fallback;
    const value = DECIMAL.test(text) ? Number(text) : Number.NaN;
    if (value >= min) return value;
    issues.push({
      path: variable,
      message: `must be an integer >= ${min}, got "${text.slice(0, 32)}"`,
    });
    return fallback;
  };
  const settings: GoccSettings = {
    maxRequests: read('MAX_REQUESTS', GOCC_DEFAULTS.maxRequests, 0),
    maxRequestsInQueue: read('MAX_REQUESTS_IN_QUEUE', GOCC_DEFAULTS.maxRequestsInQueue, 0),
    windowMillis: read('WINDOW_MILLIS', GOCC_DEFAULTS.windowMillis, 1),
  };
  if (issues.length > 0) throw new ConfigError(issues, 'environment');
  return settings;
}
