/**
 * The limiter process and its NATS connection: SIGTERM answers every waiter and exits 0; the
 * limiter starts and serves HTTP while NATS is unreachable, connects when NATS comes up, and
 * reconnects when that NATS server restarts. The shared nats-server cannot be stopped, so the
 * last test runs a NATS server of its own on a free port.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import {
  freePort,
  startLimiter,
  uniquePrefix,
  type LimiterProcess,
} from './support/limiter-process';
import { startNatsServer, stopProcess, waitUntil as eventually } from './support/nats-process';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(60_000);

type Json = Record<string, unknown>;

const SHARED_NATS = 'nats://127.0.0.1:4222';
const HOUR = 3_600_000;
async function ask(
  nc: NatsConnection,
  subject: string,
  body: Json,
  timeout = 10_000,
): Promise<Json> {
  const msg = await nc.request(subject, Buffer.from(JSON.stringify(body)), { timeout });
  return JSON.parse(Buffer.from(msg.data).toString('utf8')) as Json;
}

async function readyz(limiter: LimiterProcess): Promise<{ status: number; nats: unknown }> {
  const res = await fetch(`${limiter.url}/readyz`);
  const text = await res.text();
  let nats: unknown;
  try {
    nats = (JSON.parse(text) as Json).nats;
  } catch {
    nats = undefined;
  }
  return { status: res.status, nats };
}

describe('limiter NATS lifecycle: SIGTERM with waiters queued', () => {
  const prefix = uniquePrefix();
  let limiter: LimiterProcess | undefined;
  let nc: NatsConnection;

  beforeAll(async () => {
    nc = await connect({ servers: SHARED_NATS });
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    await nc?.close();
  });

  it('answers every waiter and exits 0', async () => {
    limiter = await startLimiter({
      NATS_URL: SHARED_NATS,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `q-${randomUUID()}`,
      MAX_REQUESTS: '1',
      MAX_REQUESTS_IN_QUEUE: '20',
      WINDOW_MILLIS: String(HOUR),
    });
    const key = `drain-${randomUUID()}`;
    await eventually('the limiter to subscribe', async () => {
      const stats = await ask(nc, `${prefix}.stats`, { key }, 500);
      return stats.key === key;
    });
    // The waiters must stay queued until SIGTERM: not admitted by the fixed hour turning.
    await awayFromWindowEnd(HOUR, 10_000);
    const admitted = await ask(nc, `${prefix}.acquire`, { key });
    expect(admitted).toMatchObject({ allowed: true, code: 'OK' });

    const waiters = Array.from({ length: 5 }, (_, i) =>
      ask(nc, `${prefix}.acquire`, { key, wait: true, requestId: `w-${i}` }, 20_000),
    );
    await eventually('five queued waiters', async () => {
      const stats = await ask(nc, `${prefix}.stats`, { key }, 1_000);
      return stats.queued === 5;
    });

    const exitCode = await limiter.stop('SIGTERM');
    const replies = await Promise.all(waiters);

    expect(exitCode).toBe(0);
    expect(replies.map((r) => r.requestId)).toEqual(['w-0', 'w-1', 'w-2', 'w-3', 'w-4']);
    expect(replies.every((r) => r.allowed === false && r.code === 'UNAVAILABLE')).toBe(true);
  });
});

describe('limiter NATS lifecycle: NATS down at start, up later, restarted', () => {
  const prefix = uniquePrefix();
  let limiter: LimiterProcess | undefined;
  let natsServer: ChildProcess | undefined;
  let nc: NatsConnection | undefined;

  afterAll(async () => {
    await nc?.close();
    await limiter?.stop('SIGKILL');
    await stopProcess(natsServer);
  });

  it('serves HTTP without NATS, connects when it comes up, reconnects after a restart', async () => {
    const natsPort = await freePort();
    limiter = await startLimiter({
      NATS_URL: `nats://127.0.0.1:${natsPort}`,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `q-${randomUUID()}`,
      MAX_REQUESTS: '10',
      WINDOW_MILLIS: String(HOUR),
    });

    // NATS unreachable: alive, not ready, and it keeps serving HTTP.
    expect((await fetch(`${limiter.url}/healthz`)).status).toBe(200);
    expect(await readyz(limiter)).toEqual({ status: 503, nats: 'connecting' });
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await fetch(`${limiter.url}/healthz`)).status).toBe(200);
    expect((await readyz(limiter)).status).toBe(503);

    // NATS comes up: the limiter connects, subscribes and answers.
    natsServer = await startNatsServer(natsPort);
    await eventually(
      'ready after NATS came up',
      async () => (await readyz(limiter!)).status === 200,
    );
    expect(await readyz(limiter)).toEqual({ status: 200, nats: 'subscribed' });
    nc = await connect({
      servers: `127.0.0.1:${natsPort}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 100,
    });
    const key = `reconnect-${randomUUID()}`;
    // Both acquires, a NATS restart apart (~4 s, more under load), in one fixed hour.
    await awayFromWindowEnd(HOUR, 20_000);
    expect(await ask(nc, `${prefix}.acquire`, { key })).toMatchObject({
      allowed: true,
      code: 'OK',
      key,
      remaining: 9,
    });

    // The NATS server restarts: the limiter notices, reconnects and answers again.
    await stopProcess(natsServer);
    await eventually('not ready while NATS is down', async () => {
      const now = await readyz(limiter!);
      return now.status === 503 && now.nats === 'disconnected';
    });
    expect((await fetch(`${limiter.url}/healthz`)).status).toBe(200);
    natsServer = await startNatsServer(natsPort);
    await eventually(
      'ready after NATS restarted',
      async () => (await readyz(limiter!)).status === 200,
    );
    await eventually('an answer after NATS restarted', async () => {
      const stats = await ask(nc!, `${prefix}.stats`, { key }, 1_000);
      return stats.key === key;
    });
    // Same process, same counters: the second acquire of the window.
    expect(await ask(nc, `${prefix}.acquire`, { key })).toMatchObject({
      allowed: true,
      code: 'OK',
      remaining: 8,
    });

    expect(await limiter.stop('SIGTERM')).toBe(0);
  });
});
