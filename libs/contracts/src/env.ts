/**
 * The operator interface (docs/contract.md, Environment): reading the environment. Invalid values are
 * refused with a message naming the variable, so a process stops at start instead of misbehaving.
 */

import type { Env, EnvName } from './env-variables';

/** LOG_LEVEL's values, which are also pino's level names. */
export const LOG_LEVELS = ['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** LOG_FORMAT's values: one JSON object per line, or text for a person at a terminal. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
/** Ours, then GoCC's (`text`, `system-default`: its environment starts the limiter as it is). */
const LOG_FORMAT_VALUES = [...LOG_FORMATS, 'text', 'system-default'] as const;
const LOG_FORMAT_OF: Readonly<Record<(typeof LOG_FORMAT_VALUES)[number], LogFormat | undefined>> = {
  json: 'json',
  pretty: 'pretty',
  text: 'pretty',
  // GoCC's own default; here the default looks at stdout.
  'system-default': undefined,
};

export type { Env, EnvName } from './env-variables';

export interface ListenConfig {
  readonly host: string;
  readonly port: number;
  readonly logLevel: LogLevel;
  /** Undefined when LOG_FORMAT is unset: json unless stdout is a terminal (decided by the logger). */
  readonly logFormat: LogFormat | undefined;
}

/** HOST, LOG_LEVEL, LOG_FORMAT and the port variable of one app (PORT for the limiter, ADMIN_PORT for admin). */
export function listenConfig(
  env: Env,
  portVariable: 'PORT' | 'ADMIN_PORT',
  defaultPort: number,
): ListenConfig {
  return {
    host: nonEmpty(env['HOST']) ?? '0.0.0.0',
    port: parsePort(portVariable, env[portVariable], defaultPort),
    logLevel: parseLogLevel(env['LOG_LEVEL']),
    logFormat: parseLogFormat(env['LOG_FORMAT']),
  };
}

export function parsePort(name: EnvName, raw: string | undefined, fallback: number): number {
  const value = nonEmpty(raw);
  if (value === undefined) return fallback;
  const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(port >= 0 && port <= 65535)) {
    throw new Error(`${name} must be a port number (0..65535), got "${value}"`);
  }
  return port;
}

/** true/1 or false/0 (any case); false when unset or empty. */
export function parseFlag(name: EnvName, raw: string | undefined): boolean {
  const value = nonEmpty(raw)?.toLowerCase();
  if (value === undefined) return false;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new Error(`${name} must be true or false, got "${raw}"`);
}

/** An integer min..max (min 1 unless given); `fallback` when unset or empty. */
export function parsePositiveInt(
  name: EnvName,
  raw: string | undefined,
  fallback: number,
  max: number,
  min = 1,
): number {
  const value = nonEmpty(raw);
  if (value === undefined) return fallback;
  const n = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max))
    throw new Error(`${name} must be an integer ${min}..${max}, got "${value}"`);
  return n;
}

/** LOG_LEVEL: silent, fatal, error, warn, info (default), debug or trace. */
export function parseLogLevel(raw: string | undefined): LogLevel {
  return oneOf('LOG_LEVEL', LOG_LEVELS, raw) ?? 'info';
}

/** LOG_FORMAT: json or pretty; undefined when unset (the logger then looks at stdout). */
export function parseLogFormat(raw: string | undefined): LogFormat | undefined {
  const value = oneOf('LOG_FORMAT', LOG_FORMAT_VALUES, raw);
  return value === undefined ? undefined : LOG_FORMAT_OF[value];
}

function oneOf<T extends string>(
  name: EnvName,
  values: readonly T[],
  raw: string | undefined,
): T | undefined {
  const value = nonEmpty(raw)?.toLowerCase();
  if (value === undefined) return undefined;
  const found = values.find((v) => v === value);
  if (found === undefined) {
    throw new Error(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  }
  return found;
}

/**
 * A server URL for an error message: whatever stands before the host's `@` (a user, a password,
 * a token) becomes `***`, up to the last `@` in case a password holds one unencoded.
 */
export function redactUrl(url: string): string {
  return url.replace(
    /^([a-z][a-z0-9+.-]*:\/\/)?.*@/i,
    (_, scheme?: string) => `${scheme ?? ''}***@`,
  );
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** A variable's value, trimmed; undefined when unset or empty (an empty value is unset). */
export function envValue(env: Env, name: EnvName): string | undefined {
  return nonEmpty(env[name]);
}
