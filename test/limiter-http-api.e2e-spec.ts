/**
 * The JSON API (/v1/*), /readyz and X-Correlation-ID on a real server (in-process app, no NATS).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReadinessService } from '../apps/limiter/src/engine-host/readiness.service';
import { eventually, startInProcessLimiter, type RunningApp } from './support/in-process-limiter';
import { awayFromWindowEnd } from './support/window';

const HOUR = 3_600_000;
const LIMIT = 5;

// Starting the app in a hook, or waiting for an hour window to have 5 s left, can take longer
// than Jest's default 5 s on a busy machine.
jest.setTimeout(30_000);

const dataDir = mkdtempSync(join(tmpdir(), 'limiter-http-api-'));

const startApp = (env: Record<string, string>): Promise<RunningApp> =>
  startInProcessLimiter(dataDir, env);

const freshKey = (): string => `api-${randomUUID()}`;

async function postJson(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('JSON API (MAX_REQUESTS=5, one-hour windows, queue of 2)', () => {
  let running: RunningApp;
  let base: string;

  const stats = async (key: string): Promise<Record<string, unknown>> => {
    const res = await fetch(`${base}/v1/stats/${encodeURIComponent(key)}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };

  beforeAll(async () => {
    running = await startApp({
      MAX_REQUESTS: String(LIMIT),
      WINDOW_MILLIS: String(HOUR),
      MAX_REQUESTS_IN_QUEUE: '2',
    });
    base = running.url;
  });

  afterAll(async () => {
    await running?.app.close();
  });

  beforeEach(async () => {
    await awayFromWindowEnd(HOUR);
  });

  it('POST /v1/acquire: 200 with the reply and the rate-limit headers', async () => {
    const key = freshKey();

    const res = await postJson(`${base}/v1/acquire`, { key, requestId: 'req-1' });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const reply = (await res.json()) as Record<string, unknown>;
    expect(reply).toMatchObject({
      allowed: true,
      code: 'OK',
      requestId: 'req-1',
      key,
      quota: 'default',
      limit: LIMIT,
      remaining: LIMIT - 1,
      retryAfterMs: 0,
      limitName: 'rph',
      shadow: false,
    });
    const resetSeconds = Math.ceil((reply['resetMs'] as number) / 1000);
    for (const prefix of ['ratelimit', 'x-ratelimit']) {
      expect(res.headers.get(`${prefix}-limit`)).toBe(String(LIMIT));
      expect(res.headers.get(`${prefix}-remaining`)).toBe(String(LIMIT - 1));
      expect(res.headers.get(`${prefix}-reset`)).toBe(String(resetSeconds));
    }
    expect(res.headers.get('retry-after')).toBeNull();
  });

  it('POST /v1/acquire: 429 RATE_LIMITED with Retry-After once the limit is used', async () => {
    const key = freshKey();
    for (let i = 0; i < LIMIT; i++) await postJson(`${base}/v1/acquire`, { key });

    const res = await postJson(`${base}/v1/acquire`, { key });

    expect(res.status).toBe(429);
    const reply = (await res.json()) as Record<string, unknown>;
    expect(reply).toMatchObject({ allowed: false, code: 'RATE_LIMITED', remaining: 0 });
    const retryAfterMs = reply['retryAfterMs'] as number;
    expect(retryAfterMs).toBeGreaterThan(0);
    const seconds = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
    expect(res.headers.get('retry-after')).toBe(seconds);
    expect(res.headers.get('x-ratelimit-retry-after')).toBe(seconds);
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
    expect(await stats(key)).toMatchObject({ approved: LIMIT, denied: 1 });
  });

  it('POST /v1/acquire: the same requestId is answered again and charged once', async () => {
    const key = freshKey();

    const first = (await (
      await postJson(`${base}/v1/acquire`, { key, requestId: 'same' })
    ).json()) as {
      remaining: number;
    };
    const second = (await (
      await postJson(`${base}/v1/acquire`, { key, requestId: 'same' })
    ).json()) as { remaining: number };

    expect(second.remaining).toBe(first.remaining);
    expect((await stats(key))['limits']).toEqual([
      expect.objectContaining({ name: 'rph', unit: 'requests', limit: LIMIT, used: 1 }),
    ]);
  });

  it('POST /v1/acquire with wait: admitted in FIFO order when capacity comes back', async () => {
    const key = freshKey();
    const ids: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      ids.push(
        ((await (await postJson(`${base}/v1/acquire`, { key })).json()) as { requestId: string })
          .requestId,
      );
    }
    const answered: string[] = [];
    const first = postJson(`${base}/v1/acquire`, { key, wait: true, requestId: 'w1' }).then(
      async (res) => {
        answered.push('w1');
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      },
    );
    await eventually(
      () => stats(key),
      (s) => s['queued'] === 1,
    );
    const second = postJson(`${base}/v1/acquire`, { key, wait: true, requestId: 'w2' }).then(
      async (res) => {
        answered.push('w2');
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      },
    );
    await eventually(
      () => stats(key),
      (s) => s['queued'] === 2,
    );
    const full = await postJson(`${base}/v1/acquire`, { key, wait: true });
    expect(full.status).toBe(429);
    expect(await full.json()).toMatchObject({ code: 'QUEUE_FULL' });

    for (const id of ids.slice(0, 2)) {
      const released = await postJson(`${base}/v1/release`, { key, requestId: id });
      expect(await released.json()).toEqual({ released: true });
    }

    const [one, two] = await Promise.all([first, second]);
    expect(one).toMatchObject({ status: 200, body: { code: 'OK', requestId: 'w1' } });
    expect(two).toMatchObject({ status: 200, body: { code: 'OK', requestId: 'w2' } });
    expect(answered).toEqual(['w1', 'w2']);
  });

  it('POST /v1/acquire with wait: 429 WAIT_TIMEOUT after maxWaitMs', async () => {
    const key = freshKey();
    for (let i = 0; i < LIMIT; i++) await postJson(`${base}/v1/acquire`, { key });

    const res = await postJson(`${base}/v1/acquire`, { key, wait: true, maxWaitMs: 100 });

    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ allowed: false, code: 'WAIT_TIMEOUT' });
    expect(res.headers.get('retry-after')).not.toBeNull();
    expect((await stats(key))['queued']).toBe(0);
  });

  it('POST /v1/acquire: 404 UNKNOWN_QUOTA for a quota that does not exist', async () => {
    const res = await postJson(`${base}/v1/acquire`, { key: freshKey(), quota: 'no-such-quota' });

    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      allowed: false,
      code: 'UNKNOWN_QUOTA',
      quota: 'no-such-quota',
    });
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });

  it('POST /v1/decide answers as acquire would and charges nothing', async () => {
    const key = freshKey();

    const res = await postJson(`${base}/v1/decide`, { key, cost: 2 });

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ allowed: true, code: 'OK', remaining: LIMIT - 2 });
    expect(await stats(key)).toMatchObject({ approved: 0, denied: 0 });
    const tooMuch = await postJson(`${base}/v1/decide`, { key, cost: LIMIT + 1 });
    expect(tooMuch.status).toBe(429);
    expect(await tooMuch.json()).toMatchObject({ allowed: false, code: 'COST_EXCEEDS_LIMIT' });
  });

  it('POST /v1/acquire/batch answers every entry in order, invalid ones in their place', async () => {
    const key = freshKey();

    const res = await postJson(`${base}/v1/acquire/batch`, {
      requests: [{ key }, { key, cost: -1 }, { key, wait: true }, { key, requestId: 'third' }],
    });

    expect(res.status).toBe(200);
    const { replies } = (await res.json()) as { replies: Record<string, unknown>[] };
    expect(replies).toHaveLength(4);
    expect(replies[0]).toMatchObject({ allowed: true, code: 'OK', remaining: LIMIT - 1 });
    expect(replies[1]).toMatchObject({ allowed: false, code: 'INVALID_REQUEST', key });
    expect(replies[1]!['reason']).toMatch(/^requests\[1\]\.cost: /);
    expect(replies[2]).toMatchObject({ allowed: false, code: 'INVALID_REQUEST' });
    expect(replies[2]!['reason']).toMatch(/^requests\[2\]\.wait: /);
    expect(replies[3]).toMatchObject({ allowed: true, code: 'OK', requestId: 'third' });
    expect(await stats(key)).toMatchObject({ approved: 2 });
  });

  it('POST /v1/release: released true once, then false; 404 for an unknown quota', async () => {
    const key = freshKey();
    await postJson(`${base}/v1/acquire`, { key, requestId: 'to-release' });

    const first = await postJson(`${base}/v1/release`, { key, requestId: 'to-release' });
    const second = await postJson(`${base}/v1/release`, { key, requestId: 'to-release' });
    const unknownQuota = await postJson(`${base}/v1/release`, {
      key,
      quota: 'nope',
      requestId: 'x',
    });

    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ released: true });
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ released: false });
    expect(unknownQuota.status).toBe(404);
    expect(await unknownQuota.json()).toMatchObject({
      ok: false,
      allowed: false,
      code: 'UNKNOWN_QUOTA',
      field: 'quota',
    });
    expect((await stats(key))['limits']).toEqual([expect.objectContaining({ used: 0 })]);
  });

  it('POST /v1/usage records usage and answers the key stats', async () => {
    const key = freshKey();

    const res = await postJson(`${base}/v1/usage`, { key, cost: { requests: 3 } });

    expect(res.status).toBe(200);
    const body = (await res.json()) as { ok: boolean; usage: Record<string, unknown> };
    expect(body.ok).toBe(true);
    expect(body.usage).toMatchObject({ key, quota: 'default' });
    expect(body.usage['limits']).toEqual([
      expect.objectContaining({ name: 'rph', used: 3, remaining: LIMIT - 3 }),
    ]);
  });

  it('GET /v1/stats/:key answers the KeyStats; 404 for an unknown quota', async () => {
    const key = freshKey();
    await postJson(`${base}/v1/acquire`, { key, cost: 2 });

    const res = await fetch(`${base}/v1/stats/${encodeURIComponent(key)}?quota=default`);
    const unknown = await fetch(`${base}/v1/stats/${encodeURIComponent(key)}?quota=nope`);

    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      key,
      quota: 'default',
      limits: [
        {
          name: 'rph',
          unit: 'requests',
          limit: LIMIT,
          used: 2,
          remaining: LIMIT - 2,
          resetMs: expect.any(Number),
        },
      ],
      queued: 0,
      inFlight: 0,
      approved: 1,
      denied: 0,
      scope: 'local',
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'UNKNOWN_QUOTA', field: 'quota' });
  });

  it('echoes X-Correlation-ID on every response and makes one up when absent', async () => {
    const urls = [
      `${base}/healthz`,
      `${base}/readyz`,
      `${base}/v1/stats/some-key`,
      `${base}/debug/some-key`,
      `${base}/no-such-route`,
      `${base}/rate/%ZZ`, // answered by Fastify itself (a malformed URL)
    ];
    for (const url of urls) {
      const given = await fetch(url, { headers: { 'X-Correlation-ID': 'corr-7' } });
      const made = await fetch(url);
      await given.text();
      await made.text();
      expect(given.headers.get('x-correlation-id')).toBe('corr-7');
      expect(made.headers.get('x-correlation-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    const acquired = await fetch(`${base}/v1/acquire`, {
      method: 'POST',
      headers: { 'X-Correlation-ID': 'corr-8' },
      body: JSON.stringify({ key: freshKey() }),
    });
    expect(acquired.headers.get('x-correlation-id')).toBe('corr-8');
    // The body is read whatever its content type (here text/plain).
    expect(acquired.status).toBe(200);
  });
});

describe('GET /readyz (NATS_URL empty)', () => {
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({});
  });

  afterAll(async () => {
    await running?.app.close();
  });

  it('is ready once the config is loaded, with NATS disabled', async () => {
    const res = await eventually(
      () => fetch(`${running.url}/readyz`),
      (r) => r.status === 200,
    );

    expect(await res.json()).toEqual({
      ready: true,
      config: 'loaded',
      nats: 'disabled',
      redis: 'disabled',
    });
  });

  it('answers 503 with the report while the config is not loaded', async () => {
    const readiness = running.app.get(ReadinessService);
    readiness.configLoaded = false;
    try {
      const res = await fetch(`${running.url}/readyz`);

      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        ready: false,
        config: 'loading',
        nats: 'disabled',
        redis: 'disabled',
      });
    } finally {
      readiness.configLoaded = true;
    }
  });
});
