/** Child processes of the limiter benchmark: every server runs apart from the load generator. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export interface Child {
  readonly process: ChildProcess;
  output(): string;
  stop(): Promise<number | null>;
}

/**
 * A port nobody listens on right now. Its own, not test/support's: that module brings the test
 * control keys, whose `@app/contracts` import the compiled benchmark (plain node) cannot resolve.
 */
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

/** Starts `node args...` (in `cwd`); resolves once `ready()` says so (bounded). */
export async function startNode(
  args: string[],
  env: Record<string, string>,
  ready: (output: string) => boolean | Promise<boolean>,
  timeoutMs = 30_000,
  cwd?: string,
): Promise<Child> {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve(ready(out)).catch(() => false))) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${args.join(' ')} not ready within ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    process: child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Runs `node args...` to the end and returns its stdout. */
export function runNode(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}`)),
    );
  });
}
