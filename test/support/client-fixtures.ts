/**
 * What the client SDK's end-to-end tests run against: two real limiter replicas on NATS and the
 * shared Redis (cluster-scope quotas, so counts are the same whichever replica answers), a prefix
 * nobody serves, and endpoints that take requests and never answer.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { configFile } from './limiter-http';
import { freePort, uniquePrefix, type LimiterProcess } from './limiter-process';
import { startReplicas } from './replicas';

export const NATS_URL = 'nats://127.0.0.1:4222';

export interface ClientFixture {
  readonly prefix: string;
  readonly limiters: readonly LimiterProcess[];
  readonly nc: NatsConnection;
  /** Quota of 5 requests (a token bucket refilling 5 an hour: no refill within a test). */
  readonly quota: string;
  /** Quota of 1 request a second with a queue: a waiter is admitted when the token refills. */
  readonly waitQuota: string;
  /** Keys `ex-<id>-*`: requests and tokens, for the examples. */
  readonly examplePrefix: string;
  /** A prefix no limiter serves (NATS answers "no responders"). */
  readonly unservedPrefix: string;
  /** A prefix with a subscriber that swallows every request. */
  readonly silentPrefix: string;
  /** An HTTP address nothing listens on. */
  readonly closedUrl: string;
  /** A TCP server that accepts connections and never answers. */
  readonly silentUrl: string;
  stop(): Promise<number[]>;
}

function bucket(limit: number, window: string) {
  return { name: 'r', unit: 'requests', limit, window, algorithm: 'token_bucket' };
}

function silentServer(): Promise<{ server: Server; sockets: Socket[]; port: number }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => void sockets.push(socket));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      resolve({ server, sockets, port });
    }),
  );
}

export async function startClientFixture(): Promise<ClientFixture> {
  const id = randomUUID().slice(0, 8);
  const dir = mkdtempSync(join(tmpdir(), 'client-'));
  const quota = `sdk-${id}`;
  const waitQuota = `sdk-wait-${id}`;
  const examplePrefix = `ex-${id}-`;
  const config = configFile(dir, [
    { name: quota, scope: 'cluster', limits: [bucket(5, '1h')] },
    {
      name: waitQuota,
      scope: 'cluster',
      limits: [bucket(1, '1s')],
      queue: { maxSize: 10, maxWaitMs: 5000 },
    },
    {
      name: `sdk-tokens-${id}`,
      scope: 'cluster',
      match: `${examplePrefix}*`,
      limits: [
        bucket(100, '1h'),
        { name: 't', unit: 'tokens', limit: 10_000, window: '1h', algorithm: 'token_bucket' },
      ],
    },
  ]);
  const prefix = uniquePrefix();
  const limiters: LimiterProcess[] = [];
  const started = await startReplicas(limiters, { prefix, configFile: config, dir }).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  const nc = await connect({ servers: NATS_URL });
  const silentPrefix = uniquePrefix();
  nc.subscribe(`${silentPrefix}.>`, { callback: () => undefined });
  await nc.flush();
  const silent = await silentServer();
  const stop = async (): Promise<number[]> => {
    await nc.close();
    for (const socket of silent.sockets) socket.destroy();
    silent.server.close();
    const codes = await Promise.all(limiters.map((l) => l.stop()));
    rmSync(dir, { recursive: true, force: true });
    return codes.map((code) => code ?? -1);
  };
  if (started !== undefined) {
    await stop();
    throw started.error;
  }
  return {
    prefix,
    limiters,
    nc,
    quota,
    waitQuota,
    examplePrefix,
    unservedPrefix: uniquePrefix(),
    silentPrefix,
    closedUrl: `http://127.0.0.1:${await freePort()}`,
    silentUrl: `http://127.0.0.1:${silent.port}`,
    stop,
  };
}
