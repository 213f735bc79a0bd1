/**
 * While the limiter drains (SIGTERM, issue 11 point 10), every operation is refused UNAVAILABLE
 * in its own reply shape: what a release, usage or reset changed would miss the last write of
 * usage, and the README says the limiter stops taking requests. The limiter runs in process and
 * is drained as SIGTERM drains it (main.ts calls the same `drain()`): the HTTP server stops
 * accepting, so the requests here are ones already on their way, as they are in production: their
 * heads were read before the drain, their bodies (or their headers' end) come after it. NATS
 * unsubscribes at the drain, so what a message delivered in that window gets is checked on the
 * subscription's handlers; test/limiter-http-slow-clients.e2e-spec.ts sends the real signal.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LimiterService } from '../apps/limiter/src/engine-host/limiter.service';
import { NatsRequestsService } from '../apps/limiter/src/nats/nats-requests.service';
import { startInProcessLimiter } from './support/in-process-limiter';
import { post, type Json } from './support/limiter-http';
import {
  headRead,
  openRaw,
  parseResponse,
  requestHead,
  within,
  type RawConnection,
  type RawResponse,
} from './support/raw-http';

jest.setTimeout(30_000);

const SHUTTING_DOWN = 'the limiter is shutting down';
const UNAVAILABLE_REPLY = { ok: false, allowed: false, code: 'UNAVAILABLE', reason: SHUTTING_DOWN };

/** A request whose head the server has read and whose rest is sent by `finish`. */
interface Held {
  readonly connection: RawConnection;
  finish(): Promise<RawResponse | undefined>;
}

/** POST or DELETE with a body: the head is read once the server says `100 Continue`. */
async function holdWithBody(port: number, method: string, path: string, body: Json): Promise<Held> {
  const text = JSON.stringify(body);
  const connection = await openRaw(port, requestHead(method, path, Buffer.byteLength(text)));
  await headRead(connection);
  return {
    connection,
    finish: () => {
      connection.write(text);
      return within(`${method} ${path}`, 10_000, connection.answered);
    },
  };
}

/**
 * A GET (which has no body to hold it back): a whole request and the start of the next one in
 * one write; once the first is answered, the server has read the second one's start too.
 */
async function holdGet(port: number, path: string): Promise<Held> {
  const connection = await openRaw(
    port,
    `GET /healthz HTTP/1.1\r\nhost: limiter\r\n\r\nGET ${path} HTTP/1.1\r\nhost: limiter\r\n`,
  );
  const first = await within('the first answer', 10_000, connection.answered);
  expect(first?.status).toBe(200);
  const seen = connection.received().length;
  return {
    connection,
    finish: async () => {
      connection.write('\r\n');
      await within(`GET ${path}`, 10_000, connection.closed);
      return parseResponse(connection.received().slice(seen));
    },
  };
}

describe('a draining limiter', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-draining-'));
  const key = `drain-${randomUUID()}`;
  let app: NestFastifyApplication;
  let port: number;
  let requestId: string;
  const held = new Map<string, Held>();

  beforeAll(async () => {
    const running = await startInProcessLimiter(dataDir, {
      MAX_REQUESTS: '100',
      WINDOW_MILLIS: '3600000',
    });
    app = running.app;
    port = Number(new URL(running.url).port);
    // Served before the drain: something to release, usage to record, stats to read.
    const admitted = await post(running.url, '/v1/acquire', { key });
    expect(admitted).toMatchObject({ status: 200, allowed: true });
    requestId = String(admitted.requestId);

    held.set('acquire', await holdWithBody(port, 'POST', '/v1/acquire', { key }));
    held.set('decide', await holdWithBody(port, 'POST', '/v1/decide', { key }));
    held.set('release', await holdWithBody(port, 'POST', '/v1/release', { key, requestId }));
    held.set('usage', await holdWithBody(port, 'POST', '/v1/usage', { key, cost: 1 }));
    held.set('stats', await holdGet(port, `/v1/stats/${key}`));
    held.set('rate', await holdWithBody(port, 'POST', `/rate/${key}`, {}));
    held.set('gocc release', await holdWithBody(port, 'DELETE', `/rate/${key}/${requestId}`, {}));
    held.set('debug', await holdGet(port, `/debug/${key}`));

    app.get(LimiterService).drain();
  });

  afterAll(async () => {
    for (const { connection } of held.values()) connection.destroy();
    await app?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stops accepting connections', async () => {
    await expect(openRaw(port)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('answers acquire and decide 503 UNAVAILABLE as AcquireReplies, closing the connection', async () => {
    for (const op of ['acquire', 'decide']) {
      const response = await held.get(op)!.finish();
      expect(response?.status).toBe(503);
      expect(response?.headers['connection']).toBe('close');
      if (op === 'acquire') expect(response?.headers['retry-after']).toBe('1');
      expect(JSON.parse(response!.body)).toMatchObject({
        allowed: false,
        code: 'UNAVAILABLE',
        key,
        reason: SHUTTING_DOWN,
      });
    }
  });

  it('answers release, usage and stats 503 UNAVAILABLE', async () => {
    for (const op of ['release', 'usage', 'stats']) {
      const response = await held.get(op)!.finish();
      expect([op, response?.status]).toEqual([op, 503]);
      expect(JSON.parse(response!.body)).toEqual(UNAVAILABLE_REPLY);
    }
  });

  it("answers GoCC's rate, release and debug 503 with the reason as text", async () => {
    for (const op of ['rate', 'gocc release', 'debug']) {
      const response = await held.get(op)!.finish();
      expect([op, response?.status, response?.body]).toEqual([op, 503, SHUTTING_DOWN]);
    }
  });

  it('answers every NATS operation UNAVAILABLE in its shape', async () => {
    const nats = app.get(NatsRequestsService);
    const ask = async (reply: Uint8Array | Promise<Uint8Array>): Promise<Json> =>
      JSON.parse(Buffer.from(await reply).toString('utf8')) as Json;
    const bytes = (body: Json): Buffer => Buffer.from(JSON.stringify(body));

    expect(await ask(nats.acquire(bytes({ key })))).toMatchObject({ code: 'UNAVAILABLE', key });
    expect(await ask(nats.decide(bytes({ key })))).toMatchObject({ code: 'UNAVAILABLE', key });
    expect(await ask(nats.release(bytes({ key, requestId })))).toEqual(UNAVAILABLE_REPLY);
    expect(await ask(nats.usage(bytes({ key, cost: 1 })))).toEqual(UNAVAILABLE_REPLY);
    expect(await ask(nats.stats(bytes({ key })))).toEqual(UNAVAILABLE_REPLY);
    const batch = await ask(nats.batch(bytes({ requests: [{ key }, { key }] })));
    expect((batch.replies as Json[]).map((r) => r.code)).toEqual(['UNAVAILABLE', 'UNAVAILABLE']);
  });
});
