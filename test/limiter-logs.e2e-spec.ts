/**
 * The limiter's logs as an operator ships them (issue 12 point 5): the real limiter with its
 * stdout piped (not a terminal), real NATS, a subject prefix of this file's own. Every line is
 * JSON without an ANSI code; admitted and rate-limited requests write nothing; bad input writes a
 * line with the correlation id and the field, at most THROTTLED_LINES_PER_SECOND a second per
 * kind, and every line suppressed is counted; the start line names the port really bound; SIGTERM
 * writes one line with what the drain did.
 */
import { natsSubjects } from '@app/contracts';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, headers, type NatsConnection } from 'nats';
import { configFile, inParallel, metric, type Json } from './support/limiter-http';
import {
  runAppToExit,
  startLimiter,
  uniquePrefix,
  type LimiterProcess,
} from './support/limiter-process';
import { expectBoundedFlood } from './support/log-flood';
import { lineLogged, logLines } from './support/log-lines';
import { waitUntil } from './support/nats-process';

jest.setTimeout(180_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const ESC = '\u001b';
const FLOOD = 2_000;

function natsSubscribed(limiter: LimiterProcess): Promise<void> {
  return waitUntil('NATS subscribed', async () => {
    const readiness = (await (await fetch(`${limiter.url}/readyz`)).json()) as Json;
    return readiness['nats'] === 'subscribed';
  });
}

const body = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

function postJson(url: string, path: string, value: unknown, correlationId?: string) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(correlationId !== undefined && { 'x-correlation-id': correlationId }),
    },
    body: JSON.stringify(value),
  });
}

describe("the limiter's logs", () => {
  const dir = mkdtempSync(join(tmpdir(), 'limiter-logs-'));
  const prefix = uniquePrefix();
  const subjects = natsSubjects(prefix);
  let limiter: LimiterProcess;
  let nc: NatsConnection;

  beforeAll(async () => {
    mkdirSync(join(dir, 'main'));
    const config = configFile(dir, [
      // Refuses all but the first request of a key for an hour (RATE_LIMITED, never logged); a
      // bucket refills continuously, so no window boundary can admit a second one.
      {
        name: 'tight',
        match: 'tight-*',
        limits: [{ name: 'rph', limit: 1, window: '1h', algorithm: 'token_bucket' }],
      },
    ]);
    limiter = await startLimiter({
      PORT: '0',
      LOG_LEVEL: 'info',
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      DATA_DIR: join(dir, 'main'),
      CONFIG_FILE: config,
      MAX_REQUESTS: '0', // the default quota admits everything
    });
    nc = await connect({ servers: NATS_URL });
    await natsSubscribed(limiter);
  });

  afterAll(async () => {
    await nc?.close();
    await limiter?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the address and the port it bound with PORT=0, and that port answers', async () => {
    const started = logLines(limiter.output()).find((l) => l.msg.startsWith('listening on '));
    expect(started).toMatchObject({
      level: 'info',
      context: 'Limiter',
      address: '127.0.0.1',
      port: limiter.port,
      msg: `listening on http://127.0.0.1:${limiter.port}`,
    });
    expect(limiter.port).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${limiter.port}/healthz`)).status).toBe(200);
  });

  it('writes every line as JSON with time, level, context and msg, and no ESC byte', () => {
    const output = limiter.output();
    expect(output).not.toContain(ESC);
    const lines = logLines(output);
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      expect(line).toMatchObject({
        level: expect.stringMatching(/^(fatal|error|warn|info|debug|trace)$/),
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        app: 'limiter',
        context: expect.any(String),
        msg: expect.any(String),
      });
    }
  });

  it('writes nothing for 1 000 admitted and rate-limited requests on HTTP and NATS', async () => {
    const before = logLines(limiter.output()).length;
    const codes = new Map<string, number>();
    const count = (code: string): void => void codes.set(code, (codes.get(code) ?? 0) + 1);
    await inParallel(250, 10, async (i) => {
      const res = await postJson(limiter.url, '/v1/acquire', { key: `open-${i}` }, `ok-${i}`);
      count(((await res.json()) as Json)['code'] as string);
    });
    await inParallel(250, 10, async (i) => {
      const res = await fetch(`${limiter.url}/rate/tight-${i % 5}`, { method: 'POST' });
      count(String(res.status));
      await res.arrayBuffer();
    });
    await inParallel(500, 20, async (i) => {
      const msg = await nc.request(subjects.acquire, body({ key: `tight-nats-${i % 5}` }), {
        timeout: 10_000,
      });
      count(JSON.parse(Buffer.from(msg.data).toString('utf8')).code as string);
    });
    expect(Object.fromEntries(codes)).toEqual({ OK: 255, '200': 5, '429': 245, RATE_LIMITED: 495 });
    // A bad request after them: once its line is here, any line they wrote would be too.
    await postJson(limiter.url, '/v1/acquire', { key: '' }, 'after-admitted');
    await lineLogged(limiter, 'after-admitted', (l) => l['correlationId'] === 'after-admitted');
    const added = logLines(limiter.output()).slice(before);
    expect(added.map((l) => l['correlationId'])).toEqual(['after-admitted']);
  });

  it('logs bad input on HTTP with the correlation id sent, the field, the route and the client', async () => {
    const res = await postJson(limiter.url, '/v1/acquire', { key: 'k', cost: -1 }, 'bad-http-1');
    expect(res.status).toBe(400);
    expect(res.headers.get('x-correlation-id')).toBe('bad-http-1');
    const line = await lineLogged(
      limiter,
      'bad-http-1',
      (l) => l['correlationId'] === 'bad-http-1',
    );
    expect(line).toMatchObject({
      level: 'warn',
      context: 'LimiterHttp',
      kind: 'http.invalid',
      status: 400,
      field: 'cost',
      method: 'POST',
      route: '/v1/acquire',
      client: '127.0.0.1',
      msg: expect.stringMatching(/^400 cost: /),
    });
    // GoCC's routes: the field the text answer names.
    const gocc = await fetch(`${limiter.url}/rate/k?canWait=maybe`, {
      method: 'POST',
      headers: { 'x-correlation-id': 'bad-gocc-1' },
    });
    expect(gocc.status).toBe(400);
    expect(
      await lineLogged(limiter, 'bad-gocc-1', (l) => l['correlationId'] === 'bad-gocc-1'),
    ).toMatchObject({ kind: 'http.invalid', field: 'canWait', route: '/rate/:key' });
  });

  it('logs bad input on NATS with the X-Correlation-ID header, else the requestId', async () => {
    const h = headers();
    h.set('X-Correlation-ID', 'bad-nats-1');
    const reply = await nc.request(subjects.acquire, body({ key: '' }), {
      timeout: 10_000,
      headers: h,
    });
    expect(JSON.parse(Buffer.from(reply.data).toString('utf8'))).toMatchObject({
      code: 'INVALID_REQUEST',
    });
    expect(
      await lineLogged(limiter, 'bad-nats-1', (l) => l['correlationId'] === 'bad-nats-1'),
    ).toMatchObject({
      level: 'warn',
      context: 'NatsRequests',
      kind: 'nats.invalid',
      operation: 'acquire',
      field: 'key',
    });
    await nc.request(subjects.release, body({ key: 'k', requestId: 'rid-7', leaseId: 5 }), {
      timeout: 10_000,
    });
    expect(await lineLogged(limiter, 'rid-7', (l) => l['correlationId'] === 'rid-7')).toMatchObject(
      { kind: 'nats.invalid', operation: 'release', field: 'leaseId' },
    );
  });

  it(`writes a bounded number of lines for ${FLOOD} bad HTTP requests`, async () => {
    const written = await expectBoundedFlood(limiter, 'http.invalid', FLOOD, async (i) => {
      const res = await postJson(limiter.url, '/v1/acquire', { key: '' }, `flood-http-${i}`);
      expect(res.status).toBe(400);
      await res.arrayBuffer();
    });
    for (const line of written) {
      expect(line).toMatchObject({
        field: 'key',
        correlationId: expect.stringMatching(/^flood-http-\d+$/),
      });
    }
  });

  it(`writes a bounded number of lines for ${FLOOD} bad NATS requests`, async () => {
    const written = await expectBoundedFlood(limiter, 'nats.invalid', FLOOD, async (i) => {
      const h = headers();
      h.set('X-Correlation-ID', `flood-nats-${i}`);
      await nc.request(subjects.acquire, body({ key: '' }), { timeout: 10_000, headers: h });
    });
    for (const line of written) {
      expect(line).toMatchObject({
        field: 'key',
        correlationId: expect.stringMatching(/^flood-nats-\d+$/),
      });
    }
  });
});

describe('the shutdown line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limiter-logs-shutdown-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says at SIGTERM what the drain answered and wrote', async () => {
    const prefix = uniquePrefix();
    const config = configFile(dir, [
      // One request, then the others wait 59 s for a token (not persisted: under a minute).
      {
        name: 'held',
        match: 'held-*',
        limits: [{ name: 'r59s', limit: 1, window: '59s', algorithm: 'token_bucket' }],
        queue: { maxSize: 10, maxWaitMs: 59_000 },
      },
      // Persisted (an hour): its keys are written at SIGTERM. A bucket refills continuously, so
      // no window ends (which would make a key idle, deleted rather than written) during the test.
      {
        name: 'kept',
        match: 'kept-*',
        limits: [{ name: 'rph', limit: 1, window: '1h', algorithm: 'token_bucket' }],
      },
    ]);
    const limiter = await startLimiter({
      LOG_LEVEL: 'info',
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      DATA_DIR: dir,
      CONFIG_FILE: config,
    });
    const nc = await connect({ servers: NATS_URL });
    try {
      await natsSubscribed(limiter);
      const key = `held-${randomUUID()}`;
      expect((await postJson(limiter.url, '/v1/acquire', { key })).status).toBe(200);
      // Two waiters on HTTP, one on NATS.
      const waiting = [
        postJson(limiter.url, '/v1/acquire', { key, wait: true }).then((r) => r.status),
        postJson(limiter.url, '/v1/acquire', { key, wait: true }).then((r) => r.status),
        nc
          .request(natsSubjects(prefix).acquire, body({ key, wait: true }), { timeout: 90_000 })
          .then((m) => JSON.parse(Buffer.from(m.data).toString('utf8')).code as string),
      ];
      await waitUntil('3 waiters queued', async () => {
        const stats = (await (await fetch(`${limiter.url}/v1/stats/${key}`)).json()) as Json;
        return stats['queued'] === 3;
      });
      // Right after a periodic save (every 5 s) wrote the first kept key, 20 more: those the
      // periodic saves have not written by SIGTERM are written by the last write. On a fast
      // machine that is all 20; a slow one may fit a periodic save in between, so the count is
      // checked against what the saves wrote (their rows counter), not assumed.
      expect((await postJson(limiter.url, '/v1/acquire', { key: 'kept-first' })).status).toBe(200);
      const saves = 'ratelimit_persistence_writes_total{result="ok"}';
      const rows = 'ratelimit_persistence_rows_total{op="written"}';
      await waitUntil('a save', async () => (await metric(limiter, saves)) >= 1);
      const rowsBefore = await metric(limiter, rows);
      for (let i = 0; i < 20; i++) {
        expect((await postJson(limiter.url, '/v1/acquire', { key: `kept-${i}` })).status).toBe(200);
      }
      const leftForTheLastWrite = 20 - ((await metric(limiter, rows)) - rowsBefore);
      expect(await limiter.stop('SIGTERM')).toBe(0);
      expect(await Promise.all(waiting)).toEqual([503, 503, 'UNAVAILABLE']);

      const lines = logLines(limiter.output());
      const last = lines.at(-1)!;
      expect(last).toMatchObject({
        level: 'info',
        context: 'Limiter',
        httpInFlight: 2,
        natsInFlight: 1,
        cutAtDeadline: 0,
        waiters: 3,
        usageRows: expect.any(Number),
        usageWrite: 'written',
        exitCode: 0,
        drainMs: expect.any(Number),
        msg: expect.stringMatching(
          /^drained in \d+ ms: 3 requests in flight answered \(0 at the deadline\), 3 waiters answered, \d+ usage rows written$/,
        ),
      });
      // A save may still have started between the count above and the signal: at most that many.
      expect(last['usageRows']).toBeLessThanOrEqual(leftForTheLastWrite);
      expect(last['msg']).toContain(`${String(last['usageRows'])} usage rows written`);
      expect(lines.filter((l) => l.msg.startsWith('drained in '))).toHaveLength(1);
      // The rows it counts are in the file.
      const db = new Database(join(dir, 'limiter.sqlite'), { readonly: true });
      const stored = db.prepare("SELECT count(*) AS n FROM key_state WHERE quota = 'kept'").get();
      db.close();
      expect(stored).toEqual({ n: 21 });
    } finally {
      await nc.close();
      await limiter.stop('SIGKILL');
    }
  });
});

describe('LOG_FORMAT=pretty', () => {
  it('writes text, without ANSI codes on a pipe', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'limiter-logs-pretty-'));
    const limiter = await startLimiter({
      LOG_FORMAT: 'pretty',
      LOG_LEVEL: 'info',
      NATS_URL: '',
      DATA_DIR: dir,
    });
    try {
      const started = `[Limiter] listening on http://127.0.0.1:${limiter.port}`;
      await waitUntil('the start line', () => limiter.output().includes(started));
      const output = limiter.output();
      expect(output).not.toContain(ESC);
      expect(output).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] INFO: \[NestFactory\] /m);
      expect(() => logLines(output)).toThrow(/is not JSON/);
    } finally {
      await limiter.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a start refused for its environment', () => {
  it.each([
    ['SHARDS', { SHARDS: 'abc' }, /SHARDS must be an integer 1\.\.4096, got "abc"/],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of .*, got "loud"/],
    [
      'LOG_FORMAT',
      { LOG_FORMAT: 'xml' },
      /LOG_FORMAT must be one of json, pretty, text, system-default, got "xml"/,
    ],
  ])('exits 1 with a JSON line naming %s', async (_name, env, message) => {
    const { code, output } = await runAppToExit('limiter', {
      NATS_URL: '',
      PORT: '0',
      DATA_DIR: join(tmpdir(), 'limiter-logs-never-written'),
      ...env,
    });
    expect(code).toBe(1);
    expect(output).not.toContain(ESC);
    const refused = logLines(output).filter((l) => l.level === 'fatal' || l.level === 'error');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.msg).toMatch(message);
  });
});
