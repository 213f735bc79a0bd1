/**
 * HTTP/2 cleartext (h2c, prior knowledge) and HTTP/1.1 on the limiter's one PORT (issue 14 point
 * 1), against the real limiter process, node:http2 as the h2c client: every route family answers
 * alike over both; many streams share a session; a stream reset or a closed session takes its
 * waiting acquire out of the queue, charging nothing; the request timeout, the idle bounds and the
 * connection cap hold for sessions as for connections.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { constants, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { h2Answer, h2Open, h2Request, h2Session, type H2Response } from './support/h2-client';
import { configFile, inParallel, type Json } from './support/limiter-http';
import { logLines } from './support/log-lines';
import { startLimiter, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import { openRaw, rawRequest, within } from './support/raw-http';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(90_000);

const HOUR = 3_600_000;

/** One request of the table: a path and a body made from the run's key. */
interface Row {
  readonly name: string;
  readonly method: string;
  path(key: string): string;
  body?(key: string): string;
  readonly headers?: Record<string, string>;
}

/** Headers both protocols must agree on (names lowercase, as HTTP/2 sends them). */
const COMPARED_HEADERS = [
  'content-type',
  'content-length',
  'ratelimit-limit',
  'ratelimit-remaining',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'retry-after',
  'x-ratelimit-retry-after',
  'x-correlation-id',
];

/** Headers that must be there or not alike, their values moving with the clock. */
const PRESENT_HEADERS = ['ratelimit-reset', 'x-ratelimit-reset'];

const json = (value: unknown): string => JSON.stringify(value);

/**
 * Every route family, in an order that walks each through its answers: admitted, refused (429),
 * bad input (400, 403, 404, 413), released, listed, stats, the operations routes.
 */
const ROWS: Row[] = [
  { name: 'GoCC acquire (POST)', method: 'POST', path: (k) => `/rate/${k}` },
  { name: 'GoCC acquire (GET)', method: 'GET', path: (k) => `/rate/${k}` },
  { name: 'GoCC acquire refused', method: 'POST', path: (k) => `/rate/${k}` },
  { name: 'GoCC HEAD never acquires', method: 'HEAD', path: (k) => `/rate/${k}` },
  { name: 'GoCC override refused', method: 'POST', path: (k) => `/rate/${k}?maxRequests=5` },
  { name: 'GoCC override out of range', method: 'POST', path: (k) => `/rate/${k}?maxRequests=0` },
  { name: 'GoCC malformed key', method: 'POST', path: () => '/rate/%ZZ' },
  { name: 'GoCC release', method: 'DELETE', path: (k) => `/rate/${k}/no-such-id` },
  { name: 'GoCC debug', method: 'GET', path: (k) => `/debug/${k}` },
  { name: 'GoCC debug listing, bad limit', method: 'GET', path: () => '/debug?limit=0' },
  {
    name: 'acquire',
    method: 'POST',
    path: () => '/v1/acquire',
    body: (k) => json({ key: `${k}-api`, requestId: 'r-1' }),
  },
  {
    name: 'acquire refused',
    method: 'POST',
    path: () => '/v1/acquire',
    body: (k) => json({ key: k, requestId: 'r-2' }),
  },
  {
    name: 'acquire, unknown quota',
    method: 'POST',
    path: () => '/v1/acquire',
    body: (k) => json({ key: k, quota: 'nope' }),
  },
  { name: 'acquire, not JSON', method: 'POST', path: () => '/v1/acquire', body: () => 'not json' },
  {
    name: 'acquire, body over 1 MiB',
    method: 'POST',
    path: () => '/v1/acquire',
    body: () => 'x'.repeat(1024 * 1024 + 1),
  },
  {
    name: 'batch',
    method: 'POST',
    path: () => '/v1/acquire/batch',
    body: (k) => json({ requests: [{ key: `${k}-batch`, requestId: 'b-1' }, { key: '' }] }),
  },
  {
    name: 'decide',
    method: 'POST',
    path: () => '/v1/decide',
    body: (k) => json({ key: `${k}-api`, requestId: 'd-1' }),
  },
  {
    name: 'release',
    method: 'POST',
    path: () => '/v1/release',
    body: (k) => json({ key: `${k}-api`, requestId: 'r-1' }),
  },
  {
    name: 'usage',
    method: 'POST',
    path: () => '/v1/usage',
    body: (k) => json({ key: `${k}-api`, requestId: 'r-1', cost: { requests: 1 } }),
  },
  { name: 'stats', method: 'GET', path: (k) => `/v1/stats/${k}` },
  { name: 'stats, unknown quota', method: 'GET', path: (k) => `/v1/stats/${k}?quota=nope` },
  { name: 'health', method: 'GET', path: () => '/healthz' },
  { name: 'readiness', method: 'GET', path: () => '/readyz' },
  { name: 'no such route', method: 'GET', path: () => '/nope' },
  {
    name: 'correlation id echoed',
    method: 'GET',
    path: () => '/healthz',
    headers: { 'x-correlation-id': 'corr-h2c-1' },
  },
];

/** What must be equal: the run's key and what the clock or a fresh id decides are masked. */
function comparable(response: H2Response, key: string): Json {
  const headers: Json = {};
  for (const name of COMPARED_HEADERS) headers[name] = response.headers[name];
  for (const name of PRESENT_HEADERS) headers[name] = response.headers[name] !== undefined;
  // A fresh correlation id is a UUID on both; an echoed one must be the same.
  if (/^[0-9a-f-]{36}$/.test(String(headers['x-correlation-id'])))
    headers['x-correlation-id'] = 'uuid';
  let body = response.body.replaceAll(key, 'KEY');
  // A GoCC admission answers its (fresh) request id as text.
  if (/^[0-9a-z]+\.[0-9a-z]+$/.test(body)) body = 'REQUEST-ID';
  if (body.startsWith('{')) body = JSON.stringify(maskClock(JSON.parse(body)));
  if (body !== response.body) delete headers['content-length'];
  return { status: response.status, headers, body };
}

/** Fields the clock sets (ms to a reset or a retry), and generated request ids. */
function maskClock(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskClock);
  if (typeof value !== 'object' || value === null) return value;
  const masked: Json = {};
  for (const [field, inner] of Object.entries(value)) {
    const clocked = ['resetMs', 'retryAfterMs', 'waitedMs'].includes(field);
    masked[field] = clocked ? typeof inner : maskClock(inner);
  }
  if (masked['requestId'] === '' || /\./.test(String(masked['requestId'])))
    masked['requestId'] = 'ID';
  return masked;
}

async function overHttp1(base: string, row: Row, key: string): Promise<H2Response> {
  const body = row.body?.(key);
  const res = await fetch(`${base}${row.path(key)}`, {
    method: row.method,
    headers: row.headers ?? {},
    ...(body !== undefined && { body }),
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => (headers[name] = value));
  return { status: res.status, headers, body: await res.text() };
}

function overH2c(session: ClientHttp2Session, row: Row, key: string): Promise<H2Response> {
  const body = row.body?.(key);
  return h2Request(session, row.path(key), {
    method: row.method,
    ...(body !== undefined && { body }),
    ...(row.headers !== undefined && { headers: row.headers }),
  });
}

describe('both protocols on PORT (MAX_REQUESTS=2 an hour, no client overrides)', () => {
  let limiter: LimiterProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-h2c-'));

  beforeAll(async () => {
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: dataDir,
      MAX_REQUESTS: '2',
      WINDOW_MILLIS: String(HOUR),
      MAX_REQUESTS_IN_QUEUE: '0',
    });
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers every route family the same over h2c as over HTTP/1.1', async () => {
    await awayFromWindowEnd(HOUR, 60_000);
    const run = randomUUID();
    const http1Key = `h1-${run}`;
    const h2Key = `h2-${run}`;
    const session = await h2Session(limiter.port);
    try {
      for (const row of ROWS) {
        const http1 = await overHttp1(limiter.url, row, http1Key);
        const h2 = await overH2c(session, row, h2Key);
        expect({ row: row.name, ...comparable(h2, h2Key) }).toEqual({
          row: row.name,
          ...comparable(http1, http1Key),
        });
      }
      // The listing and the metrics answer in their formats (their contents move between runs).
      const listing = await h2Request(session, '/debug?limit=1000');
      expect(listing.status).toBe(200);
      expect(Object.keys((JSON.parse(listing.body) as { Instances: Json }).Instances)).toEqual(
        expect.arrayContaining([http1Key, h2Key]),
      );
      const metrics = await h2Request(session, '/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
      expect(metrics.body).toContain('# TYPE');
    } finally {
      session.close();
    }
  });

  it('answers an HTTP/1.1 request asking to upgrade to h2c as HTTP/1.1', async () => {
    const client = await openRaw(
      limiter.port,
      'GET /healthz HTTP/1.1\r\nhost: limiter\r\nconnection: Upgrade, HTTP2-Settings\r\n' +
        'upgrade: h2c\r\nhttp2-settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n',
    );
    const answer = await within('an answer', 10_000, client.answered);
    client.destroy();
    expect(client.received().startsWith('HTTP/1.1 200 ')).toBe(true);
    expect(answer?.body).toBe('OK');
  });

  it('serves HTTP/1.1 and h2c connections side by side, a key counted once across both', async () => {
    await awayFromWindowEnd(HOUR);
    const key = `both-${randomUUID()}`;
    const session = await h2Session(limiter.port);
    try {
      const first = await h2Request(session, `/rate/${key}`, { method: 'POST' });
      const second = await fetch(`${limiter.url}/rate/${key}`, { method: 'POST' });
      const third = await h2Request(session, `/rate/${key}`, { method: 'POST' });
      expect([first.status, second.status, third.status]).toEqual([200, 200, 429]);
    } finally {
      session.close();
    }
  });
});

describe('many streams on one session (a quota of 600 an hour)', () => {
  let limiter: LimiterProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-h2c-many-'));

  beforeAll(async () => {
    const quota = {
      name: 'many',
      match: 'many-*',
      limits: [{ name: 'rph', limit: 600, window: '1h' }],
    };
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: dataDir,
      CONFIG_FILE: configFile(dataDir, [quota]),
    });
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('admits exactly the limit of 1 000 acquires sent 200 at a time on one session', async () => {
    await awayFromWindowEnd(HOUR, 60_000);
    const key = `many-${randomUUID()}`;
    const session = await h2Session(limiter.port);
    try {
      const statuses: number[] = [];
      // 200 at a time: past the 128 streams the server allows, which the client queues.
      await inParallel(1000, 200, async (i) => {
        const path = i % 2 === 0 ? `/rate/${key}` : '/v1/acquire';
        const body = i % 2 === 0 ? undefined : JSON.stringify({ key });
        const answer = await h2Request(session, path, { method: 'POST', ...(body && { body }) });
        statuses.push(answer.status);
      });
      expect(session.remoteSettings.maxConcurrentStreams).toBe(128);
      expect(statuses.filter((s) => s === 200)).toHaveLength(600);
      expect(statuses.filter((s) => s === 429)).toHaveLength(400);
      const stats = JSON.parse((await h2Request(session, `/v1/stats/${key}`)).body) as Json;
      expect(stats).toMatchObject({ approved: 600, denied: 400 });
    } finally {
      session.close();
    }
  });
});

describe('a waiting acquire over h2c (limit 1 an hour, queue of 10)', () => {
  let limiter: LimiterProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-h2c-wait-'));

  beforeAll(async () => {
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: dataDir,
      MAX_REQUESTS: '1',
      MAX_REQUESTS_IN_QUEUE: '10',
      WINDOW_MILLIS: String(HOUR),
      LOG_LEVEL: 'info',
    });
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const queued = async (key: string): Promise<number> => {
    const stats = (await (await fetch(`${limiter.url}/v1/stats/${key}`)).json()) as Json;
    return stats['queued'] as number;
  };

  it('leaves the queue when its stream is reset or its session closes, charging nothing', async () => {
    await awayFromWindowEnd(HOUR, 60_000);
    const key = `wait-${randomUUID()}`;
    const session = await h2Session(limiter.port);
    const first = await h2Request(session, '/v1/acquire', {
      method: 'POST',
      body: JSON.stringify({ key, requestId: 'first' }),
    });
    expect(first.status).toBe(200);

    // A JSON waiter and a GoCC waiter on one session, each reset (RST_STREAM CANCEL).
    const apiWaiter = h2Open(session, '/v1/acquire', {
      method: 'POST',
      body: JSON.stringify({ key, wait: true, maxWaitMs: 60_000 }),
    });
    const goccWaiter = h2Open(session, `/rate/${key}?canWait=true`, { method: 'POST' });
    await waitUntil('two waiters', async () => (await queued(key)) === 2);
    apiWaiter.close(constants.NGHTTP2_CANCEL);
    goccWaiter.close(constants.NGHTTP2_CANCEL);
    await waitUntil('the reset waiters to leave', async () => (await queued(key)) === 0);

    // Waiters on a session that closes under them (the client's process dies, say).
    const doomed = await h2Session(limiter.port);
    for (let i = 0; i < 3; i++) h2Open(doomed, `/rate/${key}?canWait=true`, { method: 'POST' });
    await waitUntil('three waiters', async () => (await queued(key)) === 3);
    doomed.destroy();
    await waitUntil('the closed session’s waiters to leave', async () => (await queued(key)) === 0);

    // Nothing was charged for them: released, the key admits exactly one more request.
    const released = await h2Request(session, '/v1/release', {
      method: 'POST',
      body: JSON.stringify({ key, requestId: 'first' }),
    });
    expect(JSON.parse(released.body)).toEqual({ released: true });
    const again = await h2Request(session, `/rate/${key}`, { method: 'POST' });
    const refused = await h2Request(session, `/rate/${key}`, { method: 'POST' });
    expect([again.status, refused.status]).toEqual([200, 429]);
    session.close();

    // Nothing left in flight: the drain finds no request and no waiter.
    expect(await limiter.stop('SIGTERM')).toBe(0);
    const drained = logLines(limiter.output()).find((l) => l.msg.startsWith('drained in '));
    expect(drained).toMatchObject({ httpInFlight: 0, waiters: 0, cutAtDeadline: 0 });
  });
});

describe('h2c bounds (HTTP_REQUEST_TIMEOUT_MS=1000, HTTP_MAX_CONNECTIONS=3)', () => {
  let limiter: LimiterProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-h2c-bounds-'));

  beforeAll(async () => {
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: dataDir,
      HTTP_REQUEST_TIMEOUT_MS: '1000',
      HTTP_MAX_CONNECTIONS: '3',
      MAX_REQUESTS: '1',
      MAX_REQUESTS_IN_QUEUE: '5',
      WINDOW_MILLIS: String(HOUR),
    });
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a body that does not arrive in time 408 naming it; the session goes on', async () => {
    const session = await h2Session(limiter.port);
    try {
      const slow = session.request({ ':method': 'POST', ':path': '/v1/acquire' });
      slow.on('error', () => undefined);
      slow.write('{');
      const answer = await h2Answer(slow, 20_000);
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'INVALID_REQUEST', field: 'body' });
      const gocc = session.request({ ':method': 'POST', ':path': `/rate/slow-${randomUUID()}` });
      gocc.on('error', () => undefined);
      gocc.write('x');
      const text = await h2Answer(gocc, 20_000);
      expect([text.status, text.body]).toEqual([
        408,
        'body: was not received in full in time (HTTP_REQUEST_TIMEOUT_MS)',
      ]);
      expect((await h2Request(session, '/healthz')).status).toBe(200);
    } finally {
      session.close();
    }
  });

  it('keeps a waiting acquire past the timeout, answering it when its wait ends', async () => {
    await awayFromWindowEnd(HOUR, 20_000);
    const key = `wait-${randomUUID()}`;
    const session = await h2Session(limiter.port);
    try {
      expect((await h2Request(session, `/rate/${key}`, { method: 'POST' })).status).toBe(200);
      // Silent for 3 s, three request timeouts: the session stays, the answer comes.
      const waiter = await h2Request(session, '/v1/acquire', {
        method: 'POST',
        body: JSON.stringify({ key, wait: true, maxWaitMs: 3_000 }),
      });
      expect(waiter.status).toBe(429);
      expect(JSON.parse(waiter.body)).toMatchObject({ code: 'WAIT_TIMEOUT', key });
    } finally {
      session.close();
    }
  });

  it('destroys a session whose client stops reading its answers', async () => {
    // A window of 0 bytes: the server may send no answer body at all until the client says so.
    const session = await h2Session(limiter.port, { settings: { initialWindowSize: 0 } });
    const stream = h2Open(session, '/metrics');
    await within(
      'the stuck session to be destroyed',
      20_000,
      new Promise<void>((resolve) => session.once('close', resolve)),
    );
    expect(stream.destroyed).toBe(true);
  });

  it('counts sessions as connections against HTTP_MAX_CONNECTIONS', async () => {
    // The test's own fetch pool may hold a connection too: open sessions until one is refused.
    const sessions: ClientHttp2Session[] = [];
    let refused = false;
    while (!refused && sessions.length < 4) {
      try {
        const session = await h2Session(limiter.port);
        await h2Request(session, '/healthz');
        sessions.push(session);
      } catch {
        refused = true;
      }
    }
    expect(refused).toBe(true);
    expect(sessions.length).toBeLessThanOrEqual(3);
    // An HTTP/1.1 connection is refused as well, without an answer.
    const http1 = await openRaw(limiter.port, rawRequest('GET', '/healthz'));
    expect(await within('a close', 10_000, http1.answered)).toBeUndefined();
    for (const session of sessions) session.destroy();
    await waitUntil('a session to be taken again', async () => {
      try {
        const again = await h2Session(limiter.port);
        const answer = await h2Request(again, '/healthz');
        again.destroy();
        return answer.status === 200;
      } catch {
        return false;
      }
    });
  });
});
