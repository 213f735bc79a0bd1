/** A private redis-server on a port of its own, for tests that stop and restart Redis. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { freePort } from './limiter-process';

export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  start(): Promise<void>;
  /** SIGKILL: the way a crashed or partitioned Redis looks to a client. */
  kill(): Promise<void>;
  /**
   * SIGSTOP: a hung Redis. Connections stay open and commands are accepted into the socket, but
   * nothing answers until `resume` (SIGCONT).
   */
  pause(): void;
  resume(): void;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface PrivateRedisOptions {
  /** `requirepass`: clients must AUTH with it. */
  readonly password?: string;
  /** TLS only (no plain port), with this certificate and key; clients need no certificate. */
  readonly tls?: { readonly cert: string; readonly key: string; readonly ca: string };
  /** Persistence options (`--appendonly yes --dir …`) instead of none. */
  readonly persistence?: readonly string[];
  /** This port rather than a free one: a server replacing another under the same URL. */
  readonly port?: number;
}

export async function privateRedis(options: PrivateRedisOptions = {}): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const { password, tls } = options;
  const args = [...(options.persistence ?? ['--save', '', '--appendonly', 'no'])];
  args.push(...(tls ? ['--port', '0', '--tls-port', String(port)] : ['--port', String(port)]));
  if (tls !== undefined) {
    args.push('--tls-cert-file', tls.cert, '--tls-key-file', tls.key);
    args.push('--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no');
  }
  if (password !== undefined) args.push('--requirepass', password);
  const auth = password !== undefined ? `:${encodeURIComponent(password)}@` : '';
  let child: ChildProcess | undefined;
  const redis: RedisProcess = {
    port,
    url: `${tls ? 'rediss' : 'redis'}://${auth}127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', args, { stdio: 'ignore' });
      const deadline = Date.now() + 10_000;
      while (!(await listening(port))) {
        if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async kill() {
      const c = child;
      if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGKILL');
      await exited;
    },
    pause() {
      if (child?.kill('SIGSTOP') !== true)
        throw new Error(`redis-server on ${port} is not running`);
    },
    resume() {
      if (child?.kill('SIGCONT') !== true)
        throw new Error(`redis-server on ${port} is not running`);
    },
  };
  await redis.start();
  return redis;
}
