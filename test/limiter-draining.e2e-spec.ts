/**
 * While the limiter drains (SIGTERM, issue 11 point 10), every operation is refused UNAVAILABLE
 * in its own reply shape, on HTTP and on NATS: what a release, usage or reset changed would miss
 * the last write of usage, and the README says the limiter stops taking requests. The limiter
 * runs in process, against the real nats-server, and is drained the way SIGTERM drains it;
 * test/limiter-http-slow-clients.e2e-spec.ts sends the real signal.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect, type NatsConnection } from 'nats';
import { LimiterService } from '../apps/limiter/src/engine-host/limiter.service';
import { ReadinessService } from '../apps/limiter/src/engine-host/readiness.service';
import { natsAcquire, post, type Json } from './support/limiter-http';
import { startInProcessLimiter } from './support/in-process-limiter';
import { uniquePrefix } from './support/limiter-process';
import { waitUntil } from './support/nats-process';

jest.setTimeout(30_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const SHUTTING_DOWN = 'the limiter is shutting down';
const UNAVAILABLE_REPLY = { ok: false, allowed: false, code: 'UNAVAILABLE', reason: SHUTTING_DOWN };

describe('a draining limiter', () => {
  const prefix = uniquePrefix();
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-draining-'));
  const key = `drain-${randomUUID()}`;
  let app: NestFastifyApplication;
  let url: string;
  let nc: NatsConnection;
  let requestId: string;

  beforeAll(async () => {
    ({ app, url } = await startInProcessLimiter(dataDir, {
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `q-${randomUUID()}`,
      MAX_REQUESTS: '100',
      WINDOW_MILLIS: '3600000',
    }));
    const readiness = app.get(ReadinessService);
    await waitUntil('NATS subscribed', () => readiness.nats === 'subscribed');
    nc = await connect({ servers: NATS_URL });
    // Served before the drain: something to release, usage to record, stats to read.
    const admitted = await post(url, '/v1/acquire', { key });
    expect(admitted).toMatchObject({ status: 200, allowed: true });
    requestId = String(admitted.requestId);
    app.get(LimiterService).drain();
  });

  afterAll(async () => {
    await nc?.close();
    await app?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const ask = (op: string, body: Json): Promise<Json> => natsAcquire(nc, `${prefix}.${op}`, body);

  it('answers decide UNAVAILABLE as an AcquireReply, on HTTP (503) and NATS', async () => {
    const expected = { allowed: false, code: 'UNAVAILABLE', key, reason: SHUTTING_DOWN };
    expect(await post(url, '/v1/decide', { key })).toMatchObject({ status: 503, ...expected });
    expect(await ask('decide', { key })).toMatchObject(expected);
  });

  it('answers release, usage and stats UNAVAILABLE, on HTTP (503) and NATS', async () => {
    const release = { key, requestId };
    const usage = { key, cost: { requests: 1 } };
    expect(await post(url, '/v1/release', release)).toEqual({ status: 503, ...UNAVAILABLE_REPLY });
    expect(await post(url, '/v1/usage', usage)).toEqual({ status: 503, ...UNAVAILABLE_REPLY });
    const stats = await fetch(`${url}/v1/stats/${key}`);
    expect({ status: stats.status, ...((await stats.json()) as Json) }).toEqual({
      status: 503,
      ...UNAVAILABLE_REPLY,
    });

    expect(await ask('release', release)).toEqual(UNAVAILABLE_REPLY);
    expect(await ask('usage', usage)).toEqual(UNAVAILABLE_REPLY);
    expect(await ask('stats', { key })).toEqual(UNAVAILABLE_REPLY);
  });

  it("answers GoCC's release and debug 503 with the reason as text", async () => {
    const release = await fetch(`${url}/rate/${key}/${requestId}`, { method: 'DELETE' });
    const debug = await fetch(`${url}/debug/${key}`);

    expect([release.status, await release.text()]).toEqual([503, SHUTTING_DOWN]);
    expect([debug.status, await debug.text()]).toEqual([503, SHUTTING_DOWN]);
  });

  it('answers acquires and batch entries UNAVAILABLE too, as before', async () => {
    expect(await ask('acquire', { key })).toMatchObject({ allowed: false, code: 'UNAVAILABLE' });
    const batch = await ask('acquire.batch', { requests: [{ key }, { key }] });
    expect(batch.replies).toEqual([
      expect.objectContaining({ code: 'UNAVAILABLE' }),
      expect.objectContaining({ code: 'UNAVAILABLE' }),
    ]);
  });
});
