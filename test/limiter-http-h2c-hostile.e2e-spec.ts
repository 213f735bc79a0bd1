/**
 * Hostile HTTP/2 clients and SIGTERM with open h2c streams, against the real limiter process
 * (issue 14 point 1; answers never read and slow prefaces, issue 25 points 3 and 4). The hostile clients write raw frames (test/support/raw-h2.ts): what they
 * send is what node:http2's client never would. After each, the process still answers both
 * protocols; what each gets back is a refusal by the protocol's rules, never a crash or a stall.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { H2_MAX_UNREAD_BYTES } from '../apps/limiter/src/http/http-limits';
import { h2Answer, h2Open, h2Request, h2Session } from './support/h2-client';
import { type Json } from './support/limiter-http';
import { logLines } from './support/log-lines';
import { startLimiter, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import {
  errorCode,
  FLAG,
  frame,
  FRAME,
  H2_ERROR,
  H2_PREFACE,
  headerBlock,
  headersFrame,
  openRawH2,
  requestHeaders,
  rstStream,
  SETTING,
  settingsFrame,
  windowUpdate,
  type RawH2Connection,
} from './support/raw-h2';
import { openRaw, parseResponse, within, type RawConnection } from './support/raw-http';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(90_000);

const HOUR = 3_600_000;

/** Both protocols still answer. */
async function stillServes(limiter: LimiterProcess): Promise<void> {
  expect((await fetch(`${limiter.url}/healthz`)).status).toBe(200);
  const session = await h2Session(limiter.port);
  try {
    expect((await h2Request(session, '/healthz')).status).toBe(200);
  } finally {
    session.close();
  }
}

/** Sends `bytes` one every 400 ms until the server closes the connection: how many were sent. */
async function trickleUntilClosed(client: RawConnection, bytes: Buffer): Promise<number> {
  let sent = 0;
  const trickle = setInterval(() => {
    if (sent < bytes.length) client.write(bytes.subarray(sent, ++sent));
  }, 400);
  try {
    await within('the close', 30_000, client.closed);
  } finally {
    clearInterval(trickle);
  }
  return sent;
}

const goaway = (connection: RawH2Connection): Promise<number> =>
  connection.frame('a GOAWAY', (f) => f.type === FRAME.goaway).then((f) => errorCode(f));

describe('hostile h2c clients (HTTP_REQUEST_TIMEOUT_MS=2000)', () => {
  let limiter: LimiterProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-h2c-hostile-'));

  beforeAll(async () => {
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: dataDir,
      HTTP_REQUEST_TIMEOUT_MS: '2000',
    });
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await stillServes(limiter);
  });

  it('answers a preface that goes wrong as a malformed HTTP/1.1 request (400)', async () => {
    const client = await openRaw(limiter.port, 'PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n');
    await within('the answer and the close', 10_000, client.closed);
    expect(parseResponse(client.received())?.status).toBe(400);
  });

  it('takes a preface sent a byte at a time', async () => {
    const client = await openRaw(limiter.port);
    for (const byte of H2_PREFACE) {
      client.write(byte);
      await new Promise((r) => setTimeout(r, 5));
    }
    client.write(frame(FRAME.settings, 0, 0));
    client.write(headersFrame(1, requestHeaders('GET', '/healthz')));
    await waitUntil('an h2 answer', () => client.received().length > 20);
    // A SETTINGS frame (type 4 at byte 3) first: the server spoke HTTP/2.
    expect(client.received().charCodeAt(3)).toBe(FRAME.settings);
    client.destroy();
  });

  it('closes a connection whose preface trickles in, by a deadline from its start (issue 25 point 4)', async () => {
    const client = await openRaw(limiter.port);
    // A byte every 400 ms: the whole preface would take 9.6 s, each byte well within 2 s.
    const preface = Buffer.from(H2_PREFACE, 'latin1');
    expect(await trickleUntilClosed(client, preface)).toBeLessThan(preface.length);
  });

  it('closes a session whose SETTINGS trickle in after the preface, sending no request', async () => {
    const client = await openRaw(limiter.port, H2_PREFACE);
    // 57 bytes: 23 s to send whole.
    const settings = settingsFrame(Array.from({ length: 8 }, () => [SETTING.initialWindowSize, 1]));
    expect(await trickleUntilClosed(client, settings)).toBeLessThan(settings.length);
  });

  it('tells a session that sends bytes that are not frames GOAWAY, and closes it', async () => {
    const client = await openRawH2(limiter.port);
    client.write(Buffer.from('this is not a frame at all, just bytes after the preface'));
    expect(await goaway(client)).not.toBe(H2_ERROR.noError);
    // Node leaves such a session open; it has sent no request, so the request timeout ends it.
    await within('the close', 10_000, client.closed);
  });

  it('closes a session that sends no request within the request timeout', async () => {
    const client = await openRawH2(limiter.port);
    await within('the close', 10_000, client.closed);
    expect(await goaway(client)).toBe(H2_ERROR.noError);
  });

  it('ends a session that opens more than its 128 streams, having answered none beyond', async () => {
    const client = await openRawH2(limiter.port);
    // 200 streams at once, past the SETTINGS the client acknowledged: what no client should do.
    const requests = Array.from({ length: 200 }, (_, i) =>
      headersFrame(2 * i + 1, requestHeaders('GET', '/healthz')),
    );
    client.write(Buffer.concat(requests));
    // A protocol error by RFC 9113, 5.1.2: nghttp2 ends the session with GOAWAY.
    expect(await goaway(client)).not.toBe(H2_ERROR.noError);
    await within('the close', 10_000, client.closed);
    const answered = new Set(
      client
        .frames()
        .filter((f) => f.type === FRAME.headers)
        .map((f) => f.stream),
    );
    expect(answered.size).toBeLessThanOrEqual(128);
    expect(Math.max(0, ...answered)).toBeLessThanOrEqual(2 * 127 + 1);
  });

  it('refuses a header list over 16 KiB, and the session goes on', async () => {
    const client = await openRawH2(limiter.port);
    const big = requestHeaders('GET', '/healthz', [['x-big', 'a'.repeat(20_000)]]);
    const block = headerBlock(big);
    // As the protocol requires: a HEADERS frame of at most 16 KiB, the rest in CONTINUATION.
    client.write(frame(FRAME.headers, 0x1, 1, block.subarray(0, 16_000)));
    client.write(frame(FRAME.continuation, 0x4, 1, block.subarray(16_000)));
    client.write(headersFrame(3, requestHeaders('GET', '/healthz')));
    const refused = await client.frame('stream 1 refused', (f) => f.stream === 1);
    expect(refused.type).toBe(FRAME.rstStream);
    const answered = await client.frame('stream 3 answered', (f) => f.stream === 3);
    expect(answered.type).toBe(FRAME.headers);
    client.destroy();
  });

  it('ends a session that sends CONTINUATION frames without end', async () => {
    const client = await openRawH2(limiter.port);
    client.write(frame(FRAME.headers, 0x1, 1, headerBlock(requestHeaders('GET', '/healthz'))));
    const filler = frame(FRAME.continuation, 0, 1, headerBlock([['x-fill', 'b'.repeat(1000)]]));
    // 10 MB of header block if nobody stopped it.
    for (let i = 0; i < 10_000 && !client.socket.destroyed; i++) {
      if (!client.write(filler)) await new Promise((r) => setTimeout(r, 1));
    }
    await within('the session to end', 20_000, client.closed);
    expect(client.frames().some((f) => f.stream === 1 && f.type === FRAME.headers)).toBe(false);
  });

  it('survives streams opened and reset at once, by the thousand (rapid reset)', async () => {
    const client = await openRawH2(limiter.port);
    const key = `reset-${randomUUID()}`;
    const burst: Buffer[] = [];
    for (let i = 0; i < 5000; i++) {
      const stream = 2 * i + 1;
      burst.push(headersFrame(stream, requestHeaders('POST', `/rate/${key}?canWait=true`)));
      burst.push(rstStream(stream, H2_ERROR.cancel));
    }
    client.write(Buffer.concat(burst));
    // The server either serves them or tells the client to calm down; either way it ends well.
    await Promise.race([client.closed, goaway(client).catch(() => undefined)]);
    client.destroy();
    // Nothing is left waiting for the reset streams.
    await waitUntil('no waiter left', async () => {
      const stats = (await (await fetch(`${limiter.url}/v1/stats/${key}`)).json()) as Json;
      return stats['queued'] === 0;
    });
  });

  it('answers a path with raw bytes outside printable ASCII 400 naming the key', async () => {
    const session = await h2Session(limiter.port);
    try {
      const answer = await h2Request(session, '/rate/q-\xff', { method: 'POST' });
      expect([answer.status, answer.body]).toEqual([
        400,
        'key: must be percent-encoded (raw bytes outside printable ASCII are not HTTP)',
      ]);
    } finally {
      session.close();
    }
  });
});

describe('h2c answers a client does not read (HTTP_REQUEST_TIMEOUT_MS=10000, issue 25 point 3)', () => {
  let limiter: LimiterProcess;
  let pageBytes: number;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-h2c-unread-'));
  const PAGE = '/debug?limit=1000';
  /** A flow-control window of 0: the answers' bytes cannot leave the limiter. */
  const CLOSED_WINDOW = [[SETTING.initialWindowSize, 0]] as const;

  beforeAll(async () => {
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: dataDir,
      HTTP_REQUEST_TIMEOUT_MS: '10000',
      MAX_REQUESTS: '1000000000',
      WINDOW_MILLIS: String(HOUR),
    });
    // 1 000 keys held for the hour, named so that a page of them is about 0.6 MB.
    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, j) => {
          const key = `unread-${String(i + j).padStart(4, '0')}-${'k'.repeat(200)}`;
          const res = await fetch(`${limiter.url}/rate/${key}`, { method: 'POST' });
          expect(res.status).toBe(200);
        }),
      );
    }
    // Every page lists the same keys: one size.
    const page = await fetch(`${limiter.url}${PAGE}`);
    pageBytes = Number(page.headers.get('content-length'));
    await page.arrayBuffer();
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await stillServes(limiter);
  });

  /** `count` streams of PAGE in one write: the limiter takes them all before it answers any. */
  function openPages(client: RawH2Connection, count: number): void {
    const streams = Array.from({ length: count }, (_, i) =>
      headersFrame(2 * i + 1, requestHeaders('GET', PAGE)),
    );
    client.write(Buffer.concat(streams));
  }

  it('holds at most H2_MAX_UNREAD_BYTES of them: the answers that do not fit are reset', async () => {
    const streams = 16;
    expect(streams * pageBytes).toBeGreaterThan(2 * H2_MAX_UNREAD_BYTES);
    const client = await openRawH2(limiter.port, CLOSED_WINDOW);
    openPages(client, streams);
    const settled = (type: number): Set<number> =>
      new Set(
        client
          .frames()
          .filter((f) => f.type === type)
          .map((f) => f.stream),
      );
    await waitUntil(
      'every stream answered or reset',
      () => new Set([...settled(FRAME.headers), ...settled(FRAME.rstStream)]).size === streams,
    );
    const reset = client
      .frames()
      .filter((f) => f.type === FRAME.rstStream && errorCode(f) === H2_ERROR.enhanceYourCalm);
    const held = streams - reset.length;

    // The window opens: what the limiter held comes out, and only that.
    client.write(settingsFrame([[SETTING.initialWindowSize, 2 ** 31 - 1]]));
    client.write(windowUpdate(0, 2 ** 31 - 1 - 65_535));
    const ended = (): number =>
      client.frames().filter((f) => f.type === FRAME.data && (f.flags & FLAG.endStream) !== 0)
        .length;
    await waitUntil('the held answers sent whole', () => ended() === held);
    const sent = client
      .frames()
      .filter((f) => f.type === FRAME.data)
      .reduce((bytes, f) => bytes + f.payload.length, 0);
    client.destroy();

    expect(reset.length).toBeGreaterThan(0);
    expect(held).toBeGreaterThan(0);
    expect(sent).toBe(held * pageBytes);
    expect(sent).toBeLessThanOrEqual(H2_MAX_UNREAD_BYTES);
  });

  it('cuts a session whose answers have not moved for the request timeout, PINGs or not', async () => {
    const client = await openRawH2(limiter.port, CLOSED_WINDOW);
    openPages(client, 2);
    const pinging = setInterval(() => client.write(frame(FRAME.ping, 0, 0, Buffer.alloc(8))), 500);
    try {
      await within('the session to be cut', 60_000, client.closed);
    } finally {
      clearInterval(pinging);
    }

    const frames = client.frames();
    const goawayAt = frames.findIndex((f) => f.type === FRAME.goaway);
    expect(errorCode(frames[goawayAt]!)).toBe(H2_ERROR.enhanceYourCalm);
    // Its PINGs were answered all along: they do not keep it.
    const acks = frames.slice(0, goawayAt).filter((f) => f.type === FRAME.ping);
    expect(acks.length).toBeGreaterThan(5);
  });
});

describe('SIGTERM with open h2c streams (DRAIN_TIMEOUT_MS=2000)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-h2c-drain-'));
  let limiter: LimiterProcess | undefined;

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends GOAWAY, answers waiters 503 in their route’s shape, cuts slow bodies by the deadline', async () => {
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: dataDir,
      DRAIN_TIMEOUT_MS: '2000',
      // Long enough that only the drain deadline can cut the slow bodies.
      HTTP_REQUEST_TIMEOUT_MS: '120000',
      MAX_REQUESTS: '1',
      MAX_REQUESTS_IN_QUEUE: '20',
      WINDOW_MILLIS: String(HOUR),
      LOG_LEVEL: 'info',
    });
    await awayFromWindowEnd(HOUR, 60_000);
    const key = `drain-${randomUUID()}`;
    const session = await h2Session(limiter.port);
    const goaways: number[] = [];
    let goawayAt = Infinity;
    session.on('goaway', (code: number) => {
      goaways.push(code);
      goawayAt = Math.min(goawayAt, Date.now());
    });
    expect((await h2Request(session, `/rate/${key}`, { method: 'POST' })).status).toBe(200);
    const apiWaiters = [0, 1, 2].map((i) =>
      h2Answer(
        h2Open(session, '/v1/acquire', {
          method: 'POST',
          body: JSON.stringify({ key, wait: true, requestId: `h2-${i}` }),
        }),
      ),
    );
    const goccWaiters = [0, 1].map(() =>
      h2Answer(h2Open(session, `/rate/${key}?canWait=true`, { method: 'POST' })),
    );
    // Bodies that would take minutes: a byte of each sent, the rest never.
    let slowAnsweredAt = Infinity;
    const slowBodies = [0, 1].map(() => {
      const stream = session.request({ ':method': 'POST', ':path': '/v1/release' });
      stream.on('error', () => undefined);
      stream.once('response', () => (slowAnsweredAt = Math.min(slowAnsweredAt, Date.now())));
      stream.write('{');
      return h2Answer(stream, 20_000);
    });
    // A connection that has not said which protocol it speaks: it must not hold the exit.
    const silent = await openRaw(limiter.port);
    await waitUntil('five waiters', async () => {
      const stats = JSON.parse((await h2Request(session, `/v1/stats/${key}`)).body) as Json;
      return stats['queued'] === 5;
    });

    const started = Date.now();
    const exitCode = await limiter.stop('SIGTERM');

    expect(exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(2_000 + 10_000);
    await within('the silent connection to be closed', 5_000, silent.closed);
    // At the signal (and again when the session is cut), all NO_ERROR: a graceful GOAWAY, sent
    // before the stragglers were answered 0.5 s before the deadline.
    expect(goaways.length).toBeGreaterThan(0);
    expect(goaways.every((code) => code === 0)).toBe(true);
    expect(goawayAt).toBeLessThan(slowAnsweredAt);
    for (const answer of await Promise.all(apiWaiters)) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ allowed: false, code: 'UNAVAILABLE', key });
    }
    for (const answer of await Promise.all(goccWaiters)) {
      expect([answer.status, answer.body]).toEqual([503, 'the limiter is shutting down']);
    }
    // Answered 503 shortly before the deadline, in the route's shape.
    for (const answer of await Promise.all(slowBodies)) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ ok: false, code: 'UNAVAILABLE' });
    }
    const drained = logLines(limiter.output()).find((l) => l.msg.startsWith('drained in '));
    expect(drained).toMatchObject({ httpInFlight: 7, cutAtDeadline: 2, waiters: 5 });
    session.destroy();
  });
});
