/**
 * The limiter called from NestJS with a ClientProxy (Transport.NATS): Nest's envelope
 * `{ pattern, data, id }` is accepted on every subject and answered in Nest's reply form, so
 * `send` resolves to the contract's reply; `emit` of a release is served as an event; plain JSON
 * is still answered plain. Against the real nats-server, the limiter in process and, for the
 * queue group and the drain, as real processes.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MAX_JSON_DEPTH,
  type AcquireReply,
  type BatchReply,
  type KeyStats,
  type ReleaseReply,
  type UsageReply,
} from '@app/contracts';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { connect, type NatsConnection } from 'nats';
import { lastValueFrom, timeout } from 'rxjs';
import { acquireWithClientProxy } from '../examples/calling/client-proxy';
import { startInProcessLimiter, type RunningApp } from './support/in-process-limiter';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(120_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const HOUR = 3_600_000;

function natsClientProxy(): ClientProxy {
  return ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [NATS_URL] } });
}

function send<T>(client: ClientProxy, subject: string, data: unknown, ms = 10_000): Promise<T> {
  return lastValueFrom(client.send<T>(subject, data).pipe(timeout(ms)));
}

async function plain(nc: NatsConnection, subject: string, body: string): Promise<unknown> {
  const msg = await nc.request(subject, Buffer.from(body), { timeout: 10_000 });
  return JSON.parse(Buffer.from(msg.data).toString('utf8')) as unknown;
}

describe('limiter over NATS, called with a Nest ClientProxy', () => {
  const prefix = uniquePrefix();
  const subject = (op: string): string => `${prefix}.${op}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'client-proxy-'));
  let running: RunningApp;
  let client: ClientProxy;
  let nc: NatsConnection;

  beforeAll(async () => {
    running = await startInProcessLimiter(dataDir, {
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `q-${randomUUID()}`,
      MAX_REQUESTS: '10',
      MAX_REQUESTS_IN_QUEUE: '0',
      WINDOW_MILLIS: String(HOUR),
    });
    client = natsClientProxy();
    await client.connect();
    nc = await connect({ servers: NATS_URL });
    await waitUntil('the limiter to subscribe', async () => {
      const probe = await plain(nc, subject('stats'), '{"key":"probe"}').catch(() => undefined);
      return (probe as KeyStats | undefined)?.key === 'probe';
    });
    // Counts below must not straddle the fixed hour's turn.
    await awayFromWindowEnd(HOUR, 30_000);
  });

  afterAll(async () => {
    await client?.close();
    await nc?.close();
    await running?.app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers acquire with the AcquireReply itself', async () => {
    const key = `acquire-${randomUUID()}`;
    const reply = await send<AcquireReply>(client, subject('acquire'), { key, requestId: 'a-1' });

    expect(reply).toMatchObject({ allowed: true, code: 'OK', key, requestId: 'a-1', limit: 10 });
    expect(reply.remaining).toBe(9);
  });

  it('answers decide without charging, batch, usage and stats in their shapes', async () => {
    const key = `ops-${randomUUID()}`;
    const decided = await send<AcquireReply>(client, subject('decide'), { key, cost: 3 });
    const batch = await send<BatchReply>(client, subject('acquire.batch'), {
      requests: [{ key }, { key, cost: 2 }],
    });
    const usage = await send<UsageReply>(client, subject('usage'), { key, cost: 4 });
    const stats = await send<KeyStats>(client, subject('stats'), { key });

    expect(decided).toMatchObject({ allowed: true, code: 'OK', key, remaining: 7 });
    expect(batch.replies.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 9],
      [true, 7],
    ]);
    expect(usage).toMatchObject({ ok: true, usage: { key, quota: 'default' } });
    expect(stats).toMatchObject({ key, quota: 'default', approved: 2 });
    expect(stats.limits[0]).toMatchObject({ used: 7, remaining: 3 });
  });

  it('answers release, and serves a release sent with emit as an event', async () => {
    const key = `release-${randomUUID()}`;
    await send<AcquireReply>(client, subject('acquire'), { key, requestId: 'r-1' });
    await send<AcquireReply>(client, subject('acquire'), { key, requestId: 'r-2' });

    const released = await send<ReleaseReply>(client, subject('release'), {
      key,
      requestId: 'r-1',
    });
    await lastValueFrom(client.emit(subject('release'), { key, requestId: 'r-2' }));

    expect(released).toEqual({ released: true });
    await waitUntil('the emitted release to be served', async () => {
      const stats = await send<KeyStats>(client, subject('stats'), { key });
      return stats.limits[0]?.used === 0;
    });
  });

  it('serves no acquire sent with emit (an acquire needs its reply): nothing charged', async () => {
    const key = `emit-acquire-${randomUUID()}`;
    await lastValueFrom(client.emit(subject('acquire'), { key }));
    // Same connection, same order: by this reply the emitted acquire was delivered and dropped.
    const stats = await send<KeyStats>(client, subject('stats'), { key });

    expect(stats.limits[0]).toMatchObject({ used: 0, remaining: 10 });
  });

  it('answers bad input INVALID_REQUEST naming the field, inside the reply', async () => {
    const badKey = await send<AcquireReply>(client, subject('acquire'), { key: 5 });
    const badCost = await send<AcquireReply>(client, subject('decide'), { key: 'k', cost: -1 });
    const noRequests = await send<Record<string, unknown>>(client, subject('acquire.batch'), {});
    const badEntry = await send<BatchReply>(client, subject('acquire.batch'), {
      requests: [{ key: 'fine' }, { key: '' }],
    });
    const badUsage = await send<Record<string, unknown>>(client, subject('usage'), { key: 'k' });

    // The contract names the field at the start of `reason`.
    const field = (name: string): unknown => expect.stringMatching(new RegExp(`^${name}: `));
    expect(badKey).toMatchObject({ allowed: false, code: 'INVALID_REQUEST', reason: field('key') });
    expect(badCost).toMatchObject({
      allowed: false,
      code: 'INVALID_REQUEST',
      reason: field('cost'),
    });
    expect(noRequests).toMatchObject({ code: 'INVALID_REQUEST', reason: field('requests') });
    expect(badEntry.replies.map((r) => r.code)).toEqual(['OK', 'INVALID_REQUEST']);
    expect(badEntry.replies[1]).toMatchObject({ reason: field('requests\\[1\\]\\.key') });
    expect(badUsage).toMatchObject({ code: 'INVALID_REQUEST', reason: field('cost') });
  });

  it('still answers the contract plain JSON plainly, beside envelopes', async () => {
    const key = `plain-${randomUUID()}`;
    const viaNest = await send<AcquireReply>(client, subject('acquire'), { key });
    const viaPlain = (await plain(nc, subject('acquire'), JSON.stringify({ key }))) as Record<
      string,
      unknown
    >;

    expect(viaNest).toMatchObject({ allowed: true, remaining: 9 });
    expect(viaPlain).toMatchObject({ allowed: true, code: 'OK', key, remaining: 8 });
    expect(viaPlain).not.toHaveProperty('response');
  });

  it('takes a payload nested to the JSON bound in an envelope, as it does in plain JSON', async () => {
    const key = `deep-${randomUUID()}`;
    // 16 levels in all (the contract's bound): the envelope's own level is not the payload's.
    const deep: unknown = JSON.parse(
      `${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}`,
    );
    const request = { key, extra: deep };
    const viaPlain = await plain(nc, subject('decide'), JSON.stringify(request));
    const viaNest = await send<AcquireReply>(client, subject('decide'), request, 5_000);

    expect(viaPlain).toMatchObject({ allowed: true, code: 'OK', key });
    expect(viaNest).toMatchObject({ allowed: true, code: 'OK', key });
  });

  it('does not take a plain request with a pattern field for an envelope', async () => {
    const key = `lookalike-${randomUUID()}`;
    // Unknown fields are ignored by the contract: this is an acquire of `key`, answered plainly.
    const reply = await plain(
      nc,
      subject('acquire'),
      JSON.stringify({ pattern: subject('acquire'), key }),
    );

    expect(reply).toMatchObject({ allowed: true, code: 'OK', key, remaining: 9 });
  });

  it('is what the example in examples/calling/client-proxy.ts does', async () => {
    const key = `example-${randomUUID()}`;
    const reply = await acquireWithClientProxy(NATS_URL, prefix, key);

    expect(reply).toMatchObject({ allowed: true, code: 'OK', key, remaining: 9 });
  });
});

describe('a Nest ClientProxy and limiter processes in one queue group', () => {
  const prefix = uniquePrefix();
  const queue = `q-${randomUUID()}`;
  const replicas: LimiterProcess[] = [];
  let client: ClientProxy;

  const env = {
    NATS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    NATS_QUEUE_GROUP: queue,
    MAX_REQUESTS: '1000',
    MAX_REQUESTS_IN_QUEUE: '20',
    WINDOW_MILLIS: String(HOUR),
  };

  async function approvedBy(replica: LimiterProcess, key: string): Promise<number> {
    const res = await fetch(`${replica.url}/v1/stats/${key}`);
    return ((await res.json()) as KeyStats).approved;
  }

  beforeAll(async () => {
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'client-proxy-replica-')));
    replicas.push(
      ...(await Promise.all(dirs.map((DATA_DIR) => startLimiter({ ...env, DATA_DIR })))),
    );
    client = natsClientProxy();
    await client.connect();
    await waitUntil('both replicas to be ready', async () => {
      const ready = await Promise.all(replicas.map((r) => fetch(`${r.url}/readyz`)));
      return ready.every((res) => res.ok);
    });
  });

  afterAll(async () => {
    await client?.close();
    for (const replica of replicas) await replica.stop('SIGKILL');
  });

  it('shares the requests between the replicas', async () => {
    await awayFromWindowEnd(HOUR, 30_000);
    const key = `shared-${randomUUID()}`;
    const replies = await Promise.all(
      Array.from({ length: 200 }, () => send<AcquireReply>(client, `${prefix}.acquire`, { key })),
    );
    const approved = await Promise.all(replicas.map((r) => approvedBy(r, key)));

    expect(replies.every((r) => r.allowed)).toBe(true);
    expect(approved[0]! + approved[1]!).toBe(200);
    expect(approved.every((n) => n > 0)).toBe(true);
  });

  it('answers a waiting acquire UNAVAILABLE when its replica drains at SIGTERM', async () => {
    // One replica left, so that the waiter queues where the quota is spent.
    expect(await replicas[1]!.stop('SIGTERM')).toBe(0);
    const [replica] = replicas;
    await awayFromWindowEnd(HOUR, 30_000);
    const key = `drain-${randomUUID()}`;
    const spent = await send<AcquireReply>(client, `${prefix}.acquire`, { key, cost: 1000 });
    expect(spent).toMatchObject({ allowed: true, remaining: 0 });

    const waiter = send<AcquireReply>(
      client,
      `${prefix}.acquire`,
      { key, wait: true, requestId: 'waiter' },
      20_000,
    );
    await waitUntil('the waiter to queue', async () => {
      const res = await fetch(`${replica!.url}/v1/stats/${key}`);
      return ((await res.json()) as KeyStats).queued === 1;
    });

    expect(await replica!.stop('SIGTERM')).toBe(0);
    expect(await waiter).toMatchObject({
      allowed: false,
      code: 'UNAVAILABLE',
      key,
      requestId: 'waiter',
    });
  });
});
