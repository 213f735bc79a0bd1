/**
 * Runs the real limiter as a child process from its TypeScript sources (no build step), for tests
 * that need real signals, restarts and several replicas. Every wait is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { CONTROL_KEYS_ENV } from './control-keys';
import { boundPort } from './log-lines';

const root = join(__dirname, '..', '..');

export interface LimiterProcess {
  readonly port: number;
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Sends `signal` (default SIGTERM) and resolves with the exit code (null if killed). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A NATS subject prefix of its own, so test files running in parallel never see each other. */
export function uniquePrefix(): string {
  return `test.${randomUUID().replaceAll('-', '')}`;
}

/**
 * Starts a limiter. The bound is wide: each start compiles the sources, and three at once on a
 * busy 2-core machine were seen to take over 30 s.
 */
export async function startLimiter(
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<LimiterProcess> {
  const port = env['PORT'] !== undefined ? Number(env['PORT']) : await freePort();
  return startApp('limiter', { ...env, PORT: String(port) }, port, timeoutMs);
}

/**
 * Runs apps/<app>/src/main.ts from its sources, its stdout and stderr piped (not a terminal).
 * Control is signed, as in production, with the test keys (control-keys.ts) unless `env` says
 * otherwise (NO_CONTROL_KEYS_ENV).
 */
function spawnApp(app: 'limiter' | 'admin', env: Record<string, string>) {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', `apps/${app}/src/main.ts`], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...CONTROL_KEYS_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { child, exited, output: () => out };
}

/** Runs an app that is expected to stop by itself (a refused start): its exit code and output. */
export async function runAppToExit(
  app: 'limiter' | 'admin',
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; output: string }> {
  const { child, exited, output } = spawnApp(app, env);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  return { code, output: output() };
}

/**
 * Starts apps/<app>/src/main.ts (limiter or admin) listening on `port` (set in `env` under the
 * app's own variable) and resolves once its /healthz answers. Port 0: the port it bound is read
 * from its start line, which needs LOG_LEVEL info (or lower) and JSON logs.
 */
export async function startApp(
  app: 'limiter' | 'admin',
  env: Record<string, string>,
  port: number,
  timeoutMs: number,
): Promise<LimiterProcess> {
  const { child, exited, output } = spawnApp(app, env);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${app} exited ${child.exitCode ?? child.signalCode}:\n${output()}`);
    }
    port ||= boundPort(output()) ?? 0;
    try {
      if (port !== 0 && (await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${app} did not start within ${timeoutMs} ms:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    port,
    url,
    child,
    output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
