/**
 * The NATS request-reply transport (docs/contract.md, Messages and NATS) against the real
 * nats-server: exact admission under concurrency, FIFO waiters, every operation, and malformed
 * payloads. The limiter runs in process; its settings come from the environment set before it
 * is created.
 */
import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect, type Msg, type NatsConnection } from 'nats';
import { createLimiterApp } from '../apps/limiter/src/app';
import { ReadinessService } from '../apps/limiter/src/engine-host/readiness.service';
import { uniquePrefix } from './support/limiter-process';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(30_000);

type Json = Record<string, unknown>;

const NATS_URL = 'nats://127.0.0.1:4222';
const HOUR = 3_600_000;

async function startApp(env: Record<string, string>): Promise<NestFastifyApplication> {
  Object.assign(process.env, env);
  const app = await createLimiterApp({ logger: false });
  await app.listen(0, '127.0.0.1');
  const readiness = app.get(ReadinessService);
  const deadline = Date.now() + 10_000;
  while (readiness.nats !== 'subscribed') {
    if (Date.now() > deadline) throw new Error(`NATS not subscribed: ${readiness.nats}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return app;
}

function decode(msg: Msg): Json {
  return JSON.parse(Buffer.from(msg.data).toString('utf8')) as Json;
}

async function ask(
  nc: NatsConnection,
  subject: string,
  payload: string | Uint8Array,
): Promise<Json> {
  const data = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return decode(await nc.request(subject, data, { timeout: 10_000 }));
}

describe('limiter over NATS', () => {
  const prefix = uniquePrefix();
  let app: NestFastifyApplication;
  let nc: NatsConnection;
  const subject = (op: string): string => `${prefix}.${op}`;

  beforeAll(async () => {
    app = await startApp({
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `q-${randomUUID()}`,
      MAX_REQUESTS: '10',
      MAX_REQUESTS_IN_QUEUE: '0',
      WINDOW_MILLIS: String(HOUR),
    });
    nc = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await nc?.close();
    await app?.close();
  });

  it('admits exactly 10 of 1000 concurrent acquires, ten times over', async () => {
    for (let round = 0; round < 10; round++) {
      // Exactly 10 of the default quota's fixed hour: a round is not to straddle its turn.
      await awayFromWindowEnd(HOUR);
      const key = `burst-${round}-${randomUUID()}`;
      const replies = await Promise.all(
        Array.from({ length: 1000 }, () => ask(nc, subject('acquire'), JSON.stringify({ key }))),
      );
      const admitted = replies.filter((r) => r.allowed === true);
      const refused = replies.filter((r) => r.allowed === false);

      expect(admitted).toHaveLength(10);
      expect(admitted.every((r) => r.code === 'OK' && r.key === key)).toBe(true);
      expect(refused).toHaveLength(990);
      expect(refused.every((r) => r.code === 'RATE_LIMITED')).toBe(true);
      expect(new Set(admitted.map((r) => r.remaining))).toEqual(
        new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
      );
    }
  });

  it('answers decide without charging', async () => {
    const key = `decide-${randomUUID()}`;
    const first = await ask(nc, subject('decide'), JSON.stringify({ key }));
    const second = await ask(nc, subject('decide'), JSON.stringify({ key, cost: 3 }));

    expect(first).toMatchObject({ allowed: true, code: 'OK', key, quota: 'default', limit: 10 });
    expect(first.remaining).toBe(9);
    expect(second).toMatchObject({ allowed: true, code: 'OK', remaining: 7 });
    const stats = await ask(nc, subject('stats'), JSON.stringify({ key }));
    expect(stats).toMatchObject({ key, quota: 'default', approved: 0 });
    expect((stats.limits as Json[])[0]).toMatchObject({ name: 'rph', used: 0, remaining: 10 });
  });

  it('releases an admitted request back to the window (GoCC semantics)', async () => {
    const key = `release-${randomUUID()}`;
    const admitted = await ask(nc, subject('acquire'), JSON.stringify({ key, requestId: 'r-1' }));
    expect(admitted).toMatchObject({ allowed: true, requestId: 'r-1', remaining: 9 });

    const released = await ask(nc, subject('release'), JSON.stringify({ key, requestId: 'r-1' }));
    const again = await ask(nc, subject('release'), JSON.stringify({ key, requestId: 'r-1' }));
    const unknown = await ask(nc, subject('release'), JSON.stringify({ key, requestId: 'nope' }));

    expect(released).toEqual({ released: true });
    expect(again).toEqual({ released: false });
    expect(unknown).toEqual({ released: false });
    const stats = await ask(nc, subject('stats'), JSON.stringify({ key }));
    expect((stats.limits as Json[])[0]).toMatchObject({ used: 0, remaining: 10 });
  });

  it('records usage and reports it in stats', async () => {
    const key = `usage-${randomUUID()}`;
    const usage = await ask(nc, subject('usage'), JSON.stringify({ key, cost: 4 }));

    expect(usage).toMatchObject({ ok: true, usage: { key, quota: 'default' } });
    const stats = await ask(nc, subject('stats'), JSON.stringify({ key }));
    expect(stats).toMatchObject({ key, quota: 'default', queued: 0, inFlight: 0, scope: 'local' });
    expect((stats.limits as Json[])[0]).toMatchObject({
      name: 'rph',
      unit: 'requests',
      limit: 10,
      used: 4,
      remaining: 6,
    });
  });

  it('answers a batch of 100 in order, refusing only the entry that asks to wait', async () => {
    const key = `batch-${randomUUID()}`;
    const requests = Array.from({ length: 100 }, (_, i) => ({
      key: `${key}-${i % 5}`,
      requestId: `b-${i}`,
      ...(i === 42 && { wait: true }),
    }));
    const reply = await ask(nc, subject('acquire.batch'), JSON.stringify({ requests }));
    const replies = reply.replies as Json[];

    expect(replies).toHaveLength(100);
    expect(replies.map((r) => r.requestId)).toEqual(requests.map((r) => r.requestId));
    expect(replies[42]).toMatchObject({
      allowed: false,
      code: 'INVALID_REQUEST',
      key: `${key}-2`,
      reason: expect.stringMatching(/^requests\[42\]\.wait: /) as unknown,
    });
    // 99 valid entries over 5 keys of limit 10: the first 10 of each key are admitted.
    const admitted = replies.filter((r) => r.allowed === true);
    expect(admitted).toHaveLength(50);
    expect(replies.filter((r) => r.code === 'RATE_LIMITED')).toHaveLength(49);
  });

  it('answers UNKNOWN_QUOTA for a quota that does not exist, on every operation', async () => {
    const body = JSON.stringify({ key: 'k', quota: 'no-such-quota', cost: 1 });
    for (const op of ['acquire', 'decide']) {
      expect(await ask(nc, subject(op), body)).toMatchObject({
        allowed: false,
        code: 'UNKNOWN_QUOTA',
        quota: 'no-such-quota',
      });
    }
    for (const op of ['release', 'usage', 'stats']) {
      expect(await ask(nc, subject(op), body)).toMatchObject({
        ok: false,
        allowed: false,
        code: 'UNKNOWN_QUOTA',
      });
    }
  });

  describe('malformed payloads', () => {
    const bigKey = (size: number): string => {
      const shell = JSON.stringify({ key: '' });
      return JSON.stringify({ key: 'x'.repeat(size - shell.length) });
    };
    // [operation, payload, field named in the reason]
    const corpus = (maxPayload: number): [string, string | Uint8Array, string][] => [
      ['acquire', 'not json', 'body'],
      ['acquire', '', 'body'],
      ['acquire', '   ', 'body'],
      ['acquire', '{"key":"k",', 'body'],
      ['acquire', '{"key":"k","cost":NaN}', 'body'],
      ['acquire', '[]', 'body'],
      ['acquire', 'null', 'body'],
      ['acquire', '"a string"', 'body'],
      ['acquire', new Uint8Array([0xff, 0x00, 0xfe]), 'body'],
      ['acquire', '{}', 'key'],
      ['acquire', '{"key":5}', 'key'],
      ['acquire', '{"key":""}', 'key'],
      ['acquire', JSON.stringify({ key: 'k'.repeat(300) }), 'key'],
      ['acquire', JSON.stringify({ key: 'a\u0001b' }), 'key'],
      ['acquire', JSON.stringify({ key: 'a\u009fb' }), 'key'],
      ['acquire', JSON.stringify({ key: '   ' }), 'key'],
      ['acquire', JSON.stringify({ key: '\u00a0\u3000' }), 'key'],
      ['decide', JSON.stringify({ key: ' ' }), 'key'],
      ['release', JSON.stringify({ key: ' ', requestId: 'r1' }), 'key'],
      ['usage', JSON.stringify({ key: ' \u2003', cost: 1 }), 'key'],
      ['stats', JSON.stringify({ key: '  ' }), 'key'],
      ['acquire', '{"key":"k","cost":-1}', 'cost'],
      ['acquire', '{"key":"k","cost":1.5}', 'cost'],
      ['acquire', '{"key":"k","cost":1e300}', 'cost'],
      ['acquire', '{"key":"k","cost":"1"}', 'cost'],
      ['acquire', '{"key":"k","cost":{"tokens":-5}}', 'cost.tokens'],
      ['acquire', '{"key":"k","cost":{"Bad-Unit":1}}', 'cost["Bad-Unit"]'],
      ['acquire', '{"key":"k","wait":"yes"}', 'wait'],
      ['acquire', '{"key":"k","maxWaitMs":-1}', 'maxWaitMs'],
      ['acquire', '{"key":"k","requestId":""}', 'requestId'],
      ['acquire', '{"key":"k","deadline":"tomorrow"}', 'deadline'],
      ['acquire', '{"key":"k","quota":5}', 'quota'],
      ['acquire', '{"key":"k","quota":null}', 'quota'],
      ['acquire', bigKey(maxPayload), 'key'],
      ['decide', '{"key":null}', 'key'],
      ['decide', '{"key":"k","cost":{"tokens":0.5}}', 'cost.tokens'],
      ['acquire.batch', '{"requests":"x"}', 'requests'],
      ['acquire.batch', JSON.stringify({ requests: Array(1001).fill({ key: 'a' }) }), 'requests'],
      ['acquire.batch', '', 'body'],
      ['release', '{"key":"k","requestId":5}', 'requestId'],
      ['release', 'nope', 'body'],
      ['usage', '{"key":"k"}', 'cost'],
      ['usage', '{"key":"k","cost":-3}', 'cost'],
      ['stats', '{}', 'key'],
      ['stats', '{"key":"k","quota":"bad quota"}', 'quota'],
    ];

    it('answers each exactly once, INVALID_REQUEST naming the field, and keeps serving', async () => {
      const maxPayload = nc.info?.max_payload ?? 1024 * 1024;
      const cases = corpus(maxPayload);
      const inbox = `_INBOX.${randomUUID()}`;
      const received = new Map<number, Json[]>();
      const sub = nc.subscribe(`${inbox}.*`, {
        callback: (_err, msg) => {
          const index = Number(msg.subject.slice(inbox.length + 1));
          received.set(index, [...(received.get(index) ?? []), decode(msg)]);
        },
      });
      await nc.flush();
      cases.forEach(([op, payload], i) => {
        const data = typeof payload === 'string' ? Buffer.from(payload) : payload;
        nc.publish(subject(op), data, { reply: `${inbox}.${i}` });
      });
      // The limiter answers in arrival order: once this reply is in, every earlier one is too.
      const sentinel = await ask(nc, subject('stats'), JSON.stringify({ key: 'still-up' }));
      await nc.flush();
      sub.unsubscribe();

      expect(Buffer.byteLength(bigKey(maxPayload))).toBe(maxPayload);
      expect(sentinel).toMatchObject({ key: 'still-up', quota: 'default' });
      cases.forEach(([op, , field], i) => {
        const replies = received.get(i) ?? [];
        expect({ i, op, count: replies.length }).toEqual({ i, op, count: 1 });
        const reply = replies[0]!;
        expect({ i, code: reply.code, allowed: reply.allowed }).toEqual({
          i,
          code: 'INVALID_REQUEST',
          allowed: false,
        });
        expect({ i, reason: String(reply.reason).startsWith(`${field}: `) }).toEqual({
          i,
          reason: true,
        });
      });
    });

    it('serves a request published without a reply subject, answering nothing', async () => {
      const key = `no-reply-${randomUUID()}`;
      nc.publish(subject('acquire'), Buffer.from(JSON.stringify({ key })));
      nc.publish(subject('acquire'), Buffer.from('garbage'));
      const stats = await ask(nc, subject('stats'), JSON.stringify({ key }));

      expect((stats.limits as Json[])[0]).toMatchObject({ used: 1, remaining: 9 });
    });
  });
});

describe('limiter over NATS: waiters', () => {
  const prefix = uniquePrefix();
  let app: NestFastifyApplication;
  let nc: NatsConnection;

  beforeAll(async () => {
    app = await startApp({
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `q-${randomUUID()}`,
      MAX_REQUESTS: '2',
      MAX_REQUESTS_IN_QUEUE: '10',
      WINDOW_MILLIS: '1000',
    });
    nc = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await nc?.close();
    await app?.close();
  });

  it('admits waiters in arrival order at the next windows', async () => {
    const key = `fifo-${randomUUID()}`;
    const acquire = (requestId: string, wait: boolean): Promise<Json> =>
      ask(nc, `${prefix}.acquire`, JSON.stringify({ key, requestId, wait }));
    // The waiters must find this 1 s window full: had it turned since the first two, the first
    // waiters would be admitted at once (waitedMs 0). Start early in a window, with far more time
    // left than eight requests take on a busy machine.
    await awayFromWindowEnd(1_000, 800);
    const first = await Promise.all([acquire('now-0', false), acquire('now-1', false)]);
    expect(first.map((r) => r.code)).toEqual(['OK', 'OK']);

    const order: string[] = [];
    const waiters = Array.from({ length: 6 }, (_, i) =>
      acquire(`wait-${i}`, true).then((reply) => {
        order.push(String(reply.requestId));
        return reply;
      }),
    );
    const replies = await Promise.all(waiters);

    expect(replies.map((r) => r.code)).toEqual(['OK', 'OK', 'OK', 'OK', 'OK', 'OK']);
    expect(order).toEqual(['wait-0', 'wait-1', 'wait-2', 'wait-3', 'wait-4', 'wait-5']);
    expect(replies.every((r) => Number(r.waitedMs) > 0)).toBe(true);
  });
});
