/**
 * The operator interface (docs/contract.md, Environment): reading the environment. Invalid values are
 * refused with a message naming the variable, so a process stops at start instead of misbehaving.
 */

/** Log levels in the spelling NestJS uses (structurally its `LogLevel`). */
export type LogLevelName = 'fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose';

import type { Env, EnvName } from './env-variables';

export type { Env, EnvName } from './env-variables';

export interface ListenConfig {
  readonly host: string;
  readonly port: number;
  /** false: silent. */
  readonly logLevels: LogLevelName[] | false;
}

/** HOST, LOG_LEVEL and the port variable of one app (PORT for the limiter, ADMIN_PORT for admin). */
export function listenConfig(
  env: Env,
  portVariable: 'PORT' | 'ADMIN_PORT',
  defaultPort: number,
): ListenConfig {
  return {
    host: nonEmpty(env['HOST']) ?? '0.0.0.0',
    port: parsePort(portVariable, env[portVariable], defaultPort),
    logLevels: parseLogLevel(env['LOG_LEVEL']),
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

/** An integer 1..max; `fallback` when unset or empty. */
export function parsePositiveInt(
  name: EnvName,
  raw: string | undefined,
  fallback: number,
  max: number,
): number {
  const value = nonEmpty(raw);
  if (value === undefined) return fallback;
  const n = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= max))
    throw new Error(`${name} must be an integer 1..${max}, got "${value}"`);
  return n;
}

const LEVELS: Record<string, LogLevelName[] | false> = {
  silent: false,
  fatal: ['fatal'],
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  info: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  trace: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
};

/** LOG_LEVEL: silent, fatal, error, warn, info (default), debug or trace. */
export function parseLogLevel(raw: string | undefined): LogLevelName[] | false {
  const value = (nonEmpty(raw) ?? 'info').toLowerCase();
  const levels = Object.hasOwn(LEVELS, value) ? LEVELS[value] : undefined;
  if (levels === undefined) {
    throw new Error(`LOG_LEVEL must be one of ${Object.keys(LEVELS).join(', ')}, got "${raw}"`);
  }
  return levels;
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
