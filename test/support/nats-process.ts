/** Private nats-server processes for tests that stop and restart NATS, and a bounded poll. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { connect } from 'nats';

export const NATS_SERVER_BIN = existsSync('/usr/sbin/nats-server')
  ? '/usr/sbin/nats-server'
  : 'nats-server';

/** Polls `probe` until it returns true (a throw counts as false); fails after `ms`. */
export async function waitUntil(
  what: string,
  probe: () => boolean | Promise<boolean>,
  ms = 20_000,
): Promise<void> {
  // On the monotonic clock: a test may hold Date still (jest.useFakeTimers) while it waits.
  const deadline = performance.now() + ms;
  while (
    !(await Promise.resolve()
      .then(probe)
      .catch(() => false))
  ) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface NatsServerOptions {
  /** With a store directory, JetStream is on and keeps its data there. */
  readonly storeDir?: string;
  readonly monitorPort?: number;
  /**
   * A configuration file (auth, TLS, operator mode) the test wrote. Such a server may refuse the
   * probe's connection, so it counts as up once it greets a TCP client with its INFO line.
   */
  readonly configFile?: string;
  /** Where the server logs (`-l`), e.g. to read the permission violations it reported. */
  readonly logFile?: string;
  /** Added to the server's environment: the `$VARIABLE`s its configuration file refers to. */
  readonly env?: Readonly<Record<string, string>>;
}

/** nats-server on `port`; resolves once it accepts clients. */
export async function startNatsServer(
  port: number,
  options: NatsServerOptions = {},
): Promise<ChildProcess> {
  const args = ['-a', '127.0.0.1', '-p', String(port)];
  if (options.storeDir !== undefined) args.push('-js', '-sd', options.storeDir);
  if (options.monitorPort !== undefined) args.push('-m', String(options.monitorPort));
  if (options.configFile !== undefined) args.push('-c', options.configFile);
  if (options.logFile !== undefined) args.push('-l', options.logFile);
  const server = spawn(NATS_SERVER_BIN, args, {
    stdio: 'ignore',
    env: { ...process.env, ...options.env },
  });
  await waitUntil(`nats-server on ${port}`, async () => {
    if (server.exitCode !== null) throw new Error(`nats-server exited ${server.exitCode}`);
    if (options.configFile !== undefined) return greets(port);
    const nc = await connect({ servers: `127.0.0.1:${port}`, reconnect: false });
    await nc.close();
    return true;
  });
  return server;
}

/** Whether a NATS server on `port` sends its INFO line to a new TCP client. */
function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.once('data', (data) => done(data.toString().startsWith('INFO ')));
    socket.once('error', () => done(false));
    socket.setTimeout(2_000, () => done(false));
  });
}

/** Stops a child with `signal` (SIGKILL after 10 s) and resolves once it exited. */
export async function stopProcess(
  child: ChildProcess | undefined,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
