/**
 * The SDK believes only replies of the contract's shape. Hostile or broken answers (null, not JSON,
 * `allowed` as a string, a batch refusal with code OK, a batch of the wrong length, a body with no
 * end) are served by a real NATS responder (a plain nats.js subscriber on the limiter's subjects,
 * outside any queue group) and by a real HTTP server. Each is "no limiter answered": the failure
 * policy answers and says why, release/usage/stats throw LimiterUnavailableError
 * (`invalid-reply`), the NestJS guard admits only on `allowed === true`, and the HTTP client reads
 * no more than maxReplyBytes of a body.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { connect, type Msg, type NatsConnection } from 'nats';
import {
  DEFAULT_MAX_REPLY_BYTES,
  LimiterUnavailableError,
  RateLimitClient,
  RateLimitHttpClient,
  type AcquireRequest,
  type ClientAcquireReply,
  type FailurePolicy,
} from '@app/client';
import { RateLimit, RateLimitKeys, RateLimitModule } from '@app/client/nest';
import { RateLimitThrottlerStorage } from '@app/client/throttler';
import { ADMITTED_REPLY, KEY_STATS } from '@app/contracts/messages/replies.test-util';
import { NATS_URL } from './support/client-fixtures';
import { uniquePrefix } from './support/limiter-process';

jest.setTimeout(60_000);

/** A well-formed AcquireReply, which the hostile ones below each break in one way. */
const FULL = ADMITTED_REPLY;
const json = (value: unknown): string => JSON.stringify(value);
const ERROR_REPLY_OK = json({ ok: false, allowed: false, code: 'OK', reason: 'all fine' });

/** Replies to one acquire or decide. */
const DECISION_REPLIES: readonly [string, string][] = [
  ['null', 'null'],
  ['not JSON', '<html><body>502 Bad Gateway</body></html>'],
  ['an empty body', ''],
  ['an array', '[true]'],
  ['allowed as the string "false"', json({ ...FULL, allowed: 'false' })],
  ['allowed true on RATE_LIMITED', json({ ...FULL, code: 'RATE_LIMITED', retryAfterMs: 10 })],
  ['allowed false on OK', json({ ...FULL, allowed: false })],
  ['a code the contract does not have', json({ ...FULL, code: 'ADMITTED' })],
  ['an ErrorReply with code OK', ERROR_REPLY_OK],
  ['most fields missing', json({ allowed: true, code: 'OK' })],
  ['a count as a string', json({ ...FULL, remaining: '4' })],
  ['a negative count', json({ ...FULL, limit: -1 })],
];

/** Replies to an acquire.batch of two requests. */
const BATCH_REPLIES: readonly [string, string][] = [
  ['null', 'null'],
  ['not JSON', '<html>502</html>'],
  ['a batch refusal with code OK', ERROR_REPLY_OK],
  ['no replies', '{}'],
  ['replies that are no array', json({ replies: { 0: FULL, 1: FULL } })],
  ['one reply for two requests', json({ replies: [FULL] })],
  ['three replies for two requests', json({ replies: [FULL, FULL, FULL] })],
  ['an entry whose allowed is "false"', json({ replies: [FULL, { ...FULL, allowed: 'false' }] })],
  [
    'an entry allowed on RATE_LIMITED',
    json({ replies: [FULL, { ...FULL, code: 'RATE_LIMITED' }] }),
  ],
  ['an entry that is null', json({ replies: [FULL, null] })],
];

const STATS = KEY_STATS;
const COMMON_OPERATION_REPLIES: readonly string[] = ['null', '<html>', '[]', ERROR_REPLY_OK];

/** Replies to release, usage and stats. */
const OPERATION_REPLIES: readonly [string, string][] = [
  ...COMMON_OPERATION_REPLIES.map((body) => ['release', body] as [string, string]),
  ['release', json({ released: 'yes' })],
  ['release', '{}'],
  ...COMMON_OPERATION_REPLIES.map((body) => ['usage', body] as [string, string]),
  ['usage', json({ ok: true })],
  ['usage', json({ ok: true, usage: { ...STATS, limits: 'none' } })],
  ...COMMON_OPERATION_REPLIES.map((body) => ['stats', body] as [string, string]),
  ['stats', json({ ...STATS, approved: -3 })],
  ['stats', json({ key: 'k' })],
];

/** What both servers answer now; each test sets it. */
let respond: (response: ServerResponse) => void;
function answer(body: string): void {
  respond = (response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(body);
  };
  natsBody = Buffer.from(body);
}
let natsBody: Uint8Array = Buffer.alloc(0);

let nc: NatsConnection;
let prefix: string;
let server: Server;
let baseUrl: string;
const clients: (RateLimitClient | RateLimitHttpClient)[] = [];

beforeAll(async () => {
  nc = await connect({ servers: NATS_URL });
  prefix = uniquePrefix();
  // A responder of its own on every subject of the prefix: a real NATS peer, not a limiter.
  nc.subscribe(`${prefix}.>`, { callback: (_error, msg) => msg.respond(natsBody) });
  await nc.flush();
  server = createServer((_request, response) => respond(response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await nc?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

function natsClient(failurePolicy: FailurePolicy, batching = false): RateLimitClient {
  const client = new RateLimitClient({
    connection: nc,
    subjectPrefix: prefix,
    failurePolicy,
    batching,
  });
  clients.push(client);
  return client;
}

function httpClient(failurePolicy: FailurePolicy, timeoutMs = 10_000): RateLimitHttpClient {
  const client = new RateLimitHttpClient({ baseUrl, failurePolicy, timeoutMs });
  clients.push(client);
  return client;
}

/** The failure policy's refusal, saying that the answer was no limiter's reply. */
const closedReply = (key: string): object => ({
  allowed: false,
  code: 'UNAVAILABLE',
  policy: true,
  key,
  reason: expect.stringContaining('failurePolicy closed: the answer is not a limiter reply'),
});

async function expectInvalidReply(call: Promise<unknown>): Promise<void> {
  const error: unknown = await call.then(
    (value) => ({ resolved: value }),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(LimiterUnavailableError);
  expect(error).toMatchObject({ reason: 'invalid-reply' });
}

describe('NATS replies from a backend that reads the same inboxes', () => {
  // Backends that share a NATS user (the shipped `caller`) read each other's replies. One that saw
  // a reply subject of another must not be able to name the next one as the reply subject of a
  // request of its own, or publish on it: the other's call is settled by its limiter alone.
  it("cannot settle another backend's pending acquire on a reply subject it guessed", async () => {
    const victimPrefix = uniquePrefix();
    const held: Msg[] = [];
    const refusal = json({
      ...FULL,
      allowed: false,
      code: 'RATE_LIMITED',
      remaining: 0,
      retryAfterMs: 500,
    });
    // The limiter of this test: answers the first acquire, holds the next.
    let asked = 0;
    nc.subscribe(`${victimPrefix}.>`, {
      callback: (_error, msg) => {
        if (asked++ === 0) msg.respond(Buffer.from(refusal));
        else held.push(msg);
      },
    });
    const eavesdropper = await connect({ servers: NATS_URL });
    // It reads every inbox; what it learns of the victim is the victim's replies (other suites
    // running beside this one have inboxes under `_INBOX.` too).
    const victimInbox = `_INBOX.${randomUUID().replaceAll('-', '')}`;
    const seen: string[] = [];
    eavesdropper.subscribe('_INBOX.>', {
      callback: (_error, msg) => {
        if (msg.subject.startsWith(`${victimInbox}.`)) seen.push(msg.subject);
      },
    });
    await Promise.all([nc.flush(), eavesdropper.flush()]);
    const victimNc = await connect({ servers: NATS_URL, inboxPrefix: victimInbox });
    const victim = new RateLimitClient({
      connection: victimNc,
      subjectPrefix: victimPrefix,
      batching: false,
    });
    try {
      expect(await victim.acquire({ key: 'k' })).toMatchObject({ code: 'RATE_LIMITED' });
      await eavesdropper.flush();
      expect(seen).toHaveLength(1);
      const pending = victim.acquire({ key: 'k' });
      while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));

      // Every guess an eavesdropper could make from what it saw: the same subject again, and the
      // tokens around it as a count would give them.
      const seenSubject = seen[0]!;
      const inbox = seenSubject.slice(0, seenSubject.lastIndexOf('.'));
      const last = seenSubject.slice(inbox.length + 1);
      const guesses = [seenSubject];
      for (let step = -2; step <= 64; step += 1) guesses.push(`${inbox}.${Number(last) + step}`);
      for (const guess of guesses) eavesdropper.publish(guess, json({ ...FULL, key: 'k' }));
      await eavesdropper.flush();
      await victimNc.flush();

      held[0]!.respond(Buffer.from(refusal));
      expect(await pending).toMatchObject({ allowed: false, code: 'RATE_LIMITED' });
    } finally {
      await victim.close();
      await Promise.all([victimNc.close(), eavesdropper.close()]);
    }
  });
});

type Decide = (request: AcquireRequest, policy: FailurePolicy) => Promise<ClientAcquireReply>;

const DECISION_CALLS: readonly [string, Decide][] = [
  ['NATS acquire', (request, policy) => natsClient(policy).acquire(request)],
  ['NATS decide', (request, policy) => natsClient(policy).decide(request)],
  ['HTTP acquire', (request, policy) => httpClient(policy).acquire(request)],
  ['HTTP decide', (request, policy) => httpClient(policy).decide(request)],
];

describe.each(DECISION_CALLS)('%s', (_name, call) => {
  it.each(DECISION_REPLIES)("answers %s by the failure policy ('closed')", async (_case, body) => {
    answer(body);
    await expect(call({ key: 'a' }, 'closed')).resolves.toMatchObject(closedReply('a'));
  });

  it('admits a reply whose allowed is "false" only as the \'open\' policy does', async () => {
    answer(json({ ...FULL, allowed: 'false', code: 'RATE_LIMITED' }));
    await expect(call({ key: 'a' }, 'open')).resolves.toMatchObject({
      allowed: true,
      code: 'OK',
      policy: true,
      reason: expect.stringContaining('failurePolicy open: the answer is not a limiter reply'),
    });
  });

  it("throws LimiterUnavailableError (invalid-reply) for a null reply ('throw')", async () => {
    answer('null');
    await expectInvalidReply(call({ key: 'a' }, 'throw'));
  });
});

type Batch = (requests: AcquireRequest[]) => Promise<ClientAcquireReply[]>;

const BATCH_CALLS: readonly [string, Batch][] = [
  ['NATS batch()', (requests) => natsClient('closed').batch(requests)],
  // Two acquires of one turn: the auto-batcher sends them as one acquire.batch.
  [
    'NATS auto-batched acquires',
    (requests) => {
      const client = natsClient('closed', true);
      return Promise.all(requests.map((request) => client.acquire(request)));
    },
  ],
  ['HTTP batch()', (requests) => httpClient('closed').batch(requests)],
];

describe.each(BATCH_CALLS)('%s', (_name, call) => {
  it.each(BATCH_REPLIES)(
    "answers every caller by the failure policy ('closed') for %s",
    async (_case, body) => {
      answer(body);
      await expect(call([{ key: 'a' }, { key: 'b' }])).resolves.toEqual([
        expect.objectContaining(closedReply('a')),
        expect.objectContaining(closedReply('b')),
      ]);
    },
  );
});

describe.each([
  ['NATS', (policy: FailurePolicy) => natsClient(policy)],
  ['HTTP', (policy: FailurePolicy) => httpClient(policy)],
] as const)('%s release, usage and stats', (_name, client) => {
  it.each(OPERATION_REPLIES)('%s throws invalid-reply for %s', async (operation, body) => {
    answer(body);
    const limiter = client('open');
    const call =
      operation === 'release'
        ? limiter.release({ key: 'a', requestId: 'r' })
        : operation === 'usage'
          ? limiter.usage({ key: 'a', cost: 1 })
          : limiter.stats({ key: 'a' });
    await expectInvalidReply(call);
  });
});

describe('HTTP bodies are read up to maxReplyBytes', () => {
  /** A well-formed AcquireReply that admits, longer than the cap by its reason alone. */
  const oversized = json({ ...FULL, reason: 'x'.repeat(DEFAULT_MAX_REPLY_BYTES) });

  it('refuses a body declared longer than the cap', async () => {
    answer(oversized);
    await expect(httpClient('closed').acquire({ key: 'a' })).resolves.toMatchObject(
      closedReply('a'),
    );
  });

  it('refuses a compressed body that expands past the cap', async () => {
    const gzipped = gzipSync(oversized);
    respond = (response) => {
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': gzipped.length,
      });
      response.end(gzipped);
    };
    await expect(httpClient('closed').acquire({ key: 'a' })).resolves.toMatchObject(
      closedReply('a'),
    );
  });

  it('stops reading a body that never ends, and answers before its timeout', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    respond = (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"allowed":true,"code":"OK","reason":"');
      const more = (): void => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', more);
      };
      more();
    };
    // Without the cap the client would wait for the end until its 15 s timeout ('timeout').
    const reply = await httpClient('closed', 15_000).acquire({ key: 'a' });
    expect(reply).toMatchObject(closedReply('a'));
    expect(reply.reason).toContain(`longer than maxReplyBytes (${DEFAULT_MAX_REPLY_BYTES} bytes)`);
  });
});

@Controller('guarded')
class GuardedController {
  @Get()
  @RateLimit({ key: RateLimitKeys.header('x-user') })
  get(): { ok: true } {
    return { ok: true };
  }
}

describe('the NestJS guard and the throttler storage', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ servers: NATS_URL, subjectPrefix: prefix })],
      controllers: [GuardedController],
    }).compile();
    app = moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app?.close();
  });

  it.each([
    ['allowed as the string "false"', json({ ...FULL, allowed: 'false', code: 'RATE_LIMITED' })],
    ['allowed as the string "true"', json({ ...FULL, allowed: 'true' })],
    ['null', 'null'],
    ['an ErrorReply with code OK', ERROR_REPLY_OK],
  ])('refuses the call 503 for %s (the module default: closed)', async (_case, body) => {
    answer(body);
    const res = await fetch(`${url}/guarded`, { headers: { 'x-user': randomUUID() } });
    expect(res.status).toBe(503);
    expect(res.headers.get('ratelimit-limit')).toBeNull();
    expect(await res.json()).toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('blocks a throttler call whose reply says allowed "false"', async () => {
    answer(json({ ...FULL, allowed: 'false', code: 'RATE_LIMITED', retryAfterMs: 2000 }));
    const storage = new RateLimitThrottlerStorage(natsClient('closed'), {
      logger: { warn: () => undefined },
    });
    await expect(storage.increment('k', 60_000, 5, 0, 'q')).resolves.toMatchObject({
      isBlocked: true,
    });
  });
});
