/**
 * What the deployment files must agree with, read from the apps themselves: the command that runs
 * each app, the variable and default of its port, its health routes, and the environment it reads.
 */
import { ENV_VARIABLES, type AppName } from '@app/contracts';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HealthController as AdminHealth } from '../../apps/admin/src/health/health.controller';
import { HealthController as LimiterHealth } from '../../apps/limiter/src/health/health.controller';
import { FINAL_WRITE_LIMIT_MS } from '../../apps/limiter/src/ops/persistence/persistence.service';

export const APPS: readonly AppName[] = ['limiter', 'admin'];

export const REPO_ROOT = join(__dirname, '..', '..');

export function repoFile(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}

export function repoPathExists(path: string): boolean {
  return existsSync(join(REPO_ROOT, path));
}

/** Runs a script of scripts/ from its sources, as `npm run` does; its stdout (throws on exit != 0). */
export function runScript(script: string, ...args: string[]): string {
  return execFileSync(
    process.execPath,
    ['-r', '@swc-node/register', `scripts/${script}`, ...args],
    { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/** `node dist/apps/<app>/main.js`: what `npm run build` writes and the image runs. */
export function appCommand(app: AppName): readonly string[] {
  return ['node', `dist/apps/${app}/main.js`];
}

/** The app a command runs, or undefined for any other command. */
export function appOfCommand(command: readonly string[] | undefined): AppName | undefined {
  return APPS.find((app) => JSON.stringify(command) === JSON.stringify(appCommand(app)));
}

export const PORT_VARIABLE = { limiter: 'PORT', admin: 'ADMIN_PORT' } as const;

export function envDefault(name: string): string | undefined {
  const variable = ENV_VARIABLES.find((v) => v.name === name);
  return variable === undefined || variable.default === '(unset)' ? undefined : variable.default;
}

/** The value an app sees: the one set, else the documented default. */
export function effectiveEnv(env: Readonly<Record<string, string>>, name: string): string {
  const value = env[name] ?? envDefault(name);
  if (value === undefined) throw new Error(`${name} is neither set nor has a default`);
  return value;
}

export function appPort(app: AppName, env: Readonly<Record<string, string>>): number {
  return Number(effectiveEnv(env, PORT_VARIABLE[app]));
}

/** The GET routes of the app's health controller, as Nest registers them. */
export function healthRoutes(app: AppName): string[] {
  const controller = app === 'limiter' ? LimiterHealth : AdminHealth;
  const prototype = controller.prototype as unknown as Record<string, object>;
  return Object.getOwnPropertyNames(prototype)
    .map((name) => prototype[name]!)
    .filter((handler) => Reflect.getMetadata(METHOD_METADATA, handler) === RequestMethod.GET)
    .map((handler) => `/${String(Reflect.getMetadata(PATH_METADATA, handler))}`);
}

/**
 * At SIGTERM the limiter drains for DRAIN_TIMEOUT_MS, then writes usage for at most
 * FINAL_WRITE_LIMIT_MS; whatever stops it (Docker, the kubelet) must wait longer than both, and
 * than anything run before the signal. The margin is for the process's own exit.
 */
export function limiterStopMs(env: Readonly<Record<string, string>>): number {
  return Number(effectiveEnv(env, 'DRAIN_TIMEOUT_MS')) + FINAL_WRITE_LIMIT_MS + STOP_MARGIN_MS;
}

export const STOP_MARGIN_MS = 5_000;

/**
 * Problems with the environment one app is given: a variable it does not read (an unknown one, or
 * one of the other app's), or a credential written out in a committed file. `fromSecret` says
 * whether a variable's value comes from outside the file (an env file, a k8s Secret).
 */
export function envProblems(
  app: AppName,
  env: Readonly<Record<string, string>>,
  fromSecret: (name: string) => boolean,
): string[] {
  return Object.keys(env).flatMap((name) => {
    const variable = ENV_VARIABLES.find((v) => v.name === name);
    if (variable === undefined) return [`${name} is not read by any app (ENV_VARIABLES)`];
    if (!(variable.apps as readonly string[]).includes(app)) {
      return [`${name} is not read by the ${app} (it is the ${variable.apps.join(', ')}'s)`];
    }
    if ('secret' in variable && !fromSecret(name) && !credentialFree(env[name]!)) {
      return [`${name} is a secret written in the file`];
    }
    return [];
  });
}

/** URLs without a user or password (`redis://redis:6379`): a secret variable that holds none. */
function credentialFree(value: string): boolean {
  return value.split(',').every((item) => {
    try {
      const url = new URL(item.trim());
      return url.username === '' && url.password === '';
    } catch {
      return false;
    }
  });
}
