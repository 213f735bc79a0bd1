/**
 * A private Redis Cluster (masters only, no replicas) of redis-server processes on free ports,
 * for tests that need real slot routing (MOVED, one hash slot per key). Every wait is bounded.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './limiter-process';
import { listening } from './redis-process';

const run = promisify(execFile);

export interface RedisClusterProcess {
  /** The nodes' client ports. */
  readonly ports: readonly number[];
  /** `redis://127.0.0.1:<port>` of every node: the seeds. */
  readonly urls: readonly string[];
  /** Kills every node and removes its files; safe to call twice. */
  stop(): Promise<void>;
  /**
   * Sends `signal` to the node on `port`: SIGSTOP hangs it (its connections stay open, nothing
   * answers), SIGCONT resumes it. Keep a stop under cluster-node-timeout (15 s), after which the
   * other masters mark it failed and the whole cluster answers CLUSTERDOWN.
   */
  signal(port: number, signal: 'SIGSTOP' | 'SIGCONT'): void;
}

/** Fails with a clear message when redis-server or redis-cli is missing or older than 7. */
function checkInstalled(): void {
  for (const bin of ['redis-server', 'redis-cli']) {
    const probe = spawnSync(bin, ['--version'], { encoding: 'utf8' });
    if (probe.error !== undefined || probe.status !== 0) {
      throw new Error(
        `${bin} is not installed or does not run (${probe.error?.message ?? probe.stderr}): ` +
          'the Redis Cluster tests need redis-server and redis-cli 7+ on PATH ' +
          '(Debian: apt-get install redis-server)',
      );
    }
    // --cluster-port, which keeps the bus port free of port + 10000 collisions, is Redis 7+.
    const major = Number(/(?:v=|redis-cli )(\d+)\./.exec(probe.stdout)?.[1] ?? NaN);
    if (!(major >= 7)) throw new Error(`${bin} 7+ is needed, found: ${probe.stdout.trim()}`);
  }
}

/** `count` distinct free ports (each freePort call may hand back a port just handed out). */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** CLUSTER INFO of one node as a map, or undefined while it does not answer. */
async function clusterInfo(port: number): Promise<Map<string, string> | undefined> {
  const client = new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const text = await client.cluster('INFO');
    return new Map(text.split(/\r?\n/).map((line) => line.split(':', 2) as [string, string]));
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}

/**
 * Starts `masters` redis-server nodes in cluster mode, joins them with `redis-cli --cluster
 * create` (slots split evenly, no replicas) and resolves once every node says cluster_state:ok
 * and knows all the others. On any failure the nodes started so far are stopped.
 */
export async function privateRedisCluster(masters = 3): Promise<RedisClusterProcess> {
  checkInstalled();
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const all = await freePorts(masters * 2);
  const ports = all.slice(0, masters);
  const children: ChildProcess[] = [];
  const output: string[] = [];

  const stop = async (): Promise<void> => {
    await Promise.all(
      children.map((c) => {
        if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
        const exited = new Promise((resolve) => c.once('exit', resolve));
        c.kill('SIGKILL');
        return exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    ports.forEach((port, i) => {
      const child = spawn(
        'redis-server',
        [
          ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
          ...['--cluster-enabled', 'yes', '--cluster-port', String(all[masters + i])],
          ...['--cluster-config-file', join(dir, `nodes-${port}.conf`)],
          ...['--save', '', '--appendonly', 'no'],
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout?.on('data', (b: Buffer) => output.push(`[${port}] ${b.toString()}`));
      child.stderr?.on('data', (b: Buffer) => output.push(`[${port}] ${b.toString()}`));
      children.push(child);
    });
    for (const [i, port] of ports.entries()) {
      await until(`redis-server on ${port} did not listen`, 10_000, async () => {
        if (children[i]!.exitCode !== null) throw new Error(`redis-server on ${port} exited`);
        return listening(port);
      });
    }
    await run(
      'redis-cli',
      [
        ...['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`)],
        ...['--cluster-replicas', '0', '--cluster-yes'],
      ],
      { timeout: 30_000 },
    ).catch((error: Error & { stdout?: string }) => {
      // redis-cli explains a failed create on stdout.
      throw new Error(`redis-cli --cluster create failed: ${error.message}\n${error.stdout ?? ''}`);
    });
    await until('the cluster did not reach cluster_state:ok on every node', 20_000, async () => {
      const infos = await Promise.all(ports.map(clusterInfo));
      return infos.every(
        (info) =>
          info?.get('cluster_state') === 'ok' &&
          info.get('cluster_slots_ok') === '16384' &&
          info.get('cluster_known_nodes') === String(masters),
      );
    });
  } catch (error) {
    await stop();
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(`private Redis Cluster did not start: ${detail}\n${output.join('')}`, {
      cause: error,
    });
  }
  const signal = (port: number, sig: 'SIGSTOP' | 'SIGCONT'): void => {
    const child = children[ports.indexOf(port)];
    if (child?.kill(sig) !== true) throw new Error(`no running redis-server on ${port}`);
  };
  return { ports, urls: ports.map((p) => `redis://127.0.0.1:${p}`), stop, signal };
}
