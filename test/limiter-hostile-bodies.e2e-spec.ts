/**
 * Hostile bodies on both transports (issue 11 points 5 and 6): deep nesting is refused naming
 * `body` before it is parsed, invalid UTF-8 is refused naming the field that holds it (two
 * different invalid keys used to become one U+FFFD key and share a counter), and legitimate
 * bodies, a batch of 1 000 entries or a key with U+FFFD in it, still work. The limiter runs in
 * process against the real nats-server; HTTP goes over raw sockets where fetch cannot send the
 * bytes.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect, type NatsConnection } from 'nats';
import { ReadinessService } from '../apps/limiter/src/engine-host/readiness.service';
import type { Json } from './support/limiter-http';
import { startInProcessLimiter } from './support/in-process-limiter';
import { uniquePrefix } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import { openRaw, rawRequest, within, type RawResponse } from './support/raw-http';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(60_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const HOUR = 3_600_000;
const LIMIT = 5;

/** Bytes as written: `\xff` is the byte 0xff, not the character U+00FF. */
const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1');
/** The UTF-8 bytes of `text`, one latin1 character each, as the raw HTTP helpers send them. */
const utf8Bytes = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

describe('hostile bodies on HTTP and NATS', () => {
  const prefix = uniquePrefix();
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-hostile-'));
  let app: NestFastifyApplication;
  let port: number;
  let nc: NatsConnection;

  beforeAll(async () => {
    const running = await startInProcessLimiter(dataDir, {
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `q-${randomUUID()}`,
      MAX_REQUESTS: String(LIMIT),
      WINDOW_MILLIS: String(HOUR),
    });
    app = running.app;
    port = Number(new URL(running.url).port);
    const readiness = app.get(ReadinessService);
    await waitUntil('NATS subscribed', () => readiness.nats === 'subscribed');
    nc = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await nc?.close();
    await app?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Sends `body` (latin1) as it is over HTTP. */
  async function http(method: string, path: string, body = ''): Promise<RawResponse> {
    const client = await openRaw(port, rawRequest(method, path, body));
    const response = await within(`${method} ${path}`, 10_000, client.answered);
    client.destroy();
    if (response === undefined) throw new Error(`${method} ${path}: no answer`);
    return response;
  }

  const httpJson = async (path: string, body: string): Promise<Json> => {
    const response = await http('POST', path, body);
    return { status: response.status, ...(JSON.parse(response.body) as Json) };
  };

  async function nats(op: string, body: string | Buffer): Promise<Json> {
    const data = typeof body === 'string' ? Buffer.from(body) : body;
    const msg = await nc.request(`${prefix}.${op}`, data, { timeout: 10_000 });
    return JSON.parse(Buffer.from(msg.data).toString('utf8')) as Json;
  }

  describe('JSON nesting (point 5)', () => {
    const deep = (json: string): string => `{"key":"deep","x":${json}}`;
    // Just under 1 MiB in all: NATS's max_payload and the HTTP body limit.
    const half = 512 * 1024 - 32;

    it.each([
      ['acquire', '/v1/acquire', deep(nested(half))],
      ['decide', '/v1/decide', deep(nested(17))],
      ['acquire.batch', '/v1/acquire/batch', `{"requests":${nested(half)}}`],
      ['usage', '/v1/usage', deep(nested(100))],
      ['release', '/v1/release', deep(`[${Array.from({ length: 5000 }, () => '[]').join(',')}]`)],
    ])('refuses deep or wide nesting on %s, naming body', async (op, path, body) => {
      const overHttp = await httpJson(path, body);
      const overNats = await nats(op, body);

      for (const reply of [overHttp, overNats]) {
        expect(reply).toMatchObject({ allowed: false, code: 'INVALID_REQUEST' });
        expect(String(reply.reason)).toMatch(/^body: (is nested more than 16|has more than 4000)/);
      }
      expect(overHttp.status).toBe(400);
    });

    it('still serves a batch of 1 000 entries on both transports', async () => {
      const requests = Array.from({ length: 1000 }, (_, i) => ({
        key: `batch-${i}-${randomUUID()}`,
        cost: { requests: 1, tokens: 10 },
      }));
      const body = JSON.stringify({ requests });

      for (const reply of [
        await httpJson('/v1/acquire/batch', body),
        await nats('acquire.batch', body),
      ]) {
        const replies = reply.replies as Json[];
        expect(replies).toHaveLength(1000);
        expect(replies.every((r) => r.code === 'OK')).toBe(true);
      }
    });
  });

  describe('invalid UTF-8 (point 6)', () => {
    const valid = 'q-\ufffd\ufffd';

    it('refuses q-\\xff\\xfe and q-\\xfe\\xff naming key, so they share no counter', async () => {
      await awayFromWindowEnd(HOUR, 20_000);
      const bodies = ['{"key":"q-\xff\xfe"}', '{"key":"q-\xfe\xff"}'];
      for (const body of bodies) {
        const overHttp = await httpJson('/v1/acquire', body);
        const overNats = await nats('acquire', latin1(body));
        for (const reply of [overHttp, overNats]) {
          expect(reply).toMatchObject({ allowed: false, code: 'INVALID_REQUEST' });
          expect(String(reply.reason)).toMatch(/^key: must be valid UTF-8/);
        }
        expect(overHttp.status).toBe(400);
      }

      // Nothing was charged to the key they used to become; it keeps its own counter.
      const stats = await nats('stats', JSON.stringify({ key: valid }));
      expect(stats.limits).toEqual([expect.objectContaining({ used: 0 })]);
    });

    it('still serves a valid key that holds U+FFFD itself, on both transports', async () => {
      await awayFromWindowEnd(HOUR, 20_000);
      const body = JSON.stringify({ key: valid });

      expect(await httpJson('/v1/acquire', utf8Bytes(body))).toMatchObject({
        status: 200,
        allowed: true,
        key: valid,
        remaining: LIMIT - 1,
      });
      expect(await nats('acquire', body)).toMatchObject({
        allowed: true,
        key: valid,
        remaining: LIMIT - 2,
      });
    });

    it.each([
      ['usage', 'usage', '/v1/usage', '{"key":"u\xff","cost":1}', 'key'],
      ['release', 'release', '/v1/release', '{"key":"k","requestId":"r\xc3"}', 'requestId'],
      [
        'a cost unit',
        'usage',
        '/v1/usage',
        '{"key":"k","cost":{"tok\xe9ns":1}}',
        'cost["tok\\udce9ns"]',
      ],
      [
        'a batch',
        'acquire.batch',
        '/v1/acquire/batch',
        '{"requests":[{"key":"a"},{"key":"\xf0"}]}',
        'requests[1].key',
      ],
      ['a field decide ignores', 'decide', '/v1/decide', '{"key":"k","note":"\x80"}', 'note'],
    ])('names the field that holds them: %s', async (_label, op, path, body, field) => {
      const overHttp = await httpJson(path, body);
      const overNats = await nats(op, latin1(body));

      for (const reply of [overHttp, overNats]) {
        expect(reply).toMatchObject({ allowed: false, code: 'INVALID_REQUEST' });
        expect(String(reply.reason).startsWith(`${field}: must be valid UTF-8`)).toBe(true);
      }
      expect(overHttp.status).toBe(400);
    });

    it('refuses them in the GoCC path, raw or percent-encoded, naming key', async () => {
      for (const [method, path] of [
        ['POST', '/rate/q-%FF%FE'],
        ['POST', '/rate/q-\xff\xfe'],
        ['GET', '/debug/q-\xfe\xff'],
      ] as const) {
        const response = await http(method, path);
        expect([response.status, response.body.split(':')[0]]).toEqual([400, 'key']);
      }
      const encoded = await http('POST', `/rate/${encodeURIComponent('q-\ufffd-gocc')}`);
      expect(encoded.status).toBe(200);
    });
  });
});
