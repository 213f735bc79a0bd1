/**
 * GoCC's HTTP routes on a real server (in-process app, no NATS): /rate/:key, release, /debug/:key,
 * client overrides, waiting and hanging up, the rate-limit headers and X-Correlation-ID.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LimiterService } from '../apps/limiter/src/engine-host/limiter.service';
import { eventually, startInProcessLimiter, type RunningApp } from './support/in-process-limiter';
import { awayFromWindowEnd } from './support/window';

const HOUR = 3_600_000;

// Starting the app in a hook, or waiting for an hour window to have 5 s left, can take longer
// than Jest's default 5 s on a busy machine.
jest.setTimeout(30_000);

interface Debug {
  Key: string;
  Config: { WindowMillis: number; MaxRequestsPerWindow: number; MaxRequestsInQueue: number };
  NumApprovedThisWindow: number;
  NumDeniedThisWindow: number;
  NumWaiting: number;
  Found: boolean;
}

const dataDir = mkdtempSync(join(tmpdir(), 'limiter-http-gocc-'));

const startApp = (env: Record<string, string>): Promise<RunningApp> =>
  startInProcessLimiter(dataDir, env);

const freshKey = (): string => `gocc-${randomUUID()}`;

async function post(url: string): Promise<Response> {
  return fetch(url, { method: 'POST' });
}

async function debug(base: string, key: string): Promise<Debug> {
  const res = await fetch(`${base}/debug/${encodeURIComponent(key)}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Debug;
}

/** A request that stays open (it waits in the queue) until destroyed; resolves with its answer. */
interface OpenRequest {
  readonly request: ClientRequest;
  readonly answer: Promise<{ status: number; body: string } | 'hung up'>;
}

function openRequest(url: string): OpenRequest {
  let request!: ClientRequest;
  const answer = new Promise<{ status: number; body: string } | 'hung up'>((resolve) => {
    request = httpRequest(url, { method: 'POST', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve('hung up'));
    });
    request.on('error', () => resolve('hung up'));
    request.end();
  });
  return { request, answer };
}

async function exhaust(base: string, key: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await post(`${base}/rate/${encodeURIComponent(key)}`);
    expect(res.status).toBe(200);
    ids.push(await res.text());
  }
  return ids;
}

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('GoCC routes (MAX_REQUESTS=100, one-hour windows, queue of 2, no client overrides)', () => {
  let running: RunningApp;
  let base: string;

  beforeAll(async () => {
    running = await startApp({
      MAX_REQUESTS: '100',
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

  it('admits 100 requests with their requestIds, then answers 429 with an empty body', async () => {
    const key = freshKey();
    const ids = await exhaust(base, key, 100);

    expect(new Set(ids).size).toBe(100);
    expect(ids.every((id) => id.length > 0)).toBe(true);
    const refused = await post(`${base}/rate/${key}`);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toBe('');
    expect(refused.headers.get('content-length')).toBe('0');
    const refusedByGet = await fetch(`${base}/rate/${key}`);
    expect(refusedByGet.status).toBe(429);
    expect(await refusedByGet.text()).toBe('');
  });

  it('answers 200 with the requestId as text/plain, on GET as on POST', async () => {
    const key = freshKey();

    const res = await fetch(`${base}/rate/${key}`);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await res.text()).length).toBeGreaterThan(0);
    expect((await debug(base, key)).NumApprovedThisWindow).toBe(1);
  });

  it('does not acquire on HEAD', async () => {
    const key = freshKey();

    const res = await fetch(`${base}/rate/${key}`, { method: 'HEAD' });

    expect(res.status).toBe(404);
    expect((await debug(base, key)).Found).toBe(false);
  });

  it('shows the debug view of a key', async () => {
    const key = freshKey();
    await exhaust(base, key, 100);
    await post(`${base}/rate/${key}`);
    await post(`${base}/rate/${key}`);

    expect(await debug(base, key)).toEqual({
      Key: key,
      Config: { WindowMillis: HOUR, MaxRequestsPerWindow: 100, MaxRequestsInQueue: 2 },
      NumApprovedThisWindow: 100,
      NumDeniedThisWindow: 2,
      NumWaiting: 0,
      Found: true,
    });
    expect(await debug(base, freshKey())).toMatchObject({
      Config: { WindowMillis: HOUR, MaxRequestsPerWindow: 100, MaxRequestsInQueue: 2 },
      NumApprovedThisWindow: 0,
      NumDeniedThisWindow: 0,
      NumWaiting: 0,
      Found: false,
    });
  });

  it("lists the keys held with their counts, page by page, as GoCC's /debug", async () => {
    const prefix = freshKey();
    const keys = Array.from({ length: 25 }, (_, i) => `${prefix}-${i}`);
    for (const [i, key] of keys.entries()) await exhaust(base, key, (i % 3) + 1);

    const listed = new Map<string, Debug>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query = `limit=7${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const res = await fetch(`${base}/debug?${query}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as { Instances: Record<string, Debug>; NextCursor?: string };
      expect(Object.keys(page.Instances).length).toBeLessThanOrEqual(7);
      for (const [key, view] of Object.entries(page.Instances)) listed.set(key, view);
      cursor = page.NextCursor;
      pages++;
    } while (cursor !== undefined && pages < 1_000);

    expect(cursor).toBeUndefined();
    expect(pages).toBeGreaterThanOrEqual(4);
    for (const [i, key] of keys.entries()) {
      expect(listed.get(key)).toEqual({
        Key: key,
        Config: { WindowMillis: HOUR, MaxRequestsPerWindow: 100, MaxRequestsInQueue: 2 },
        NumApprovedThisWindow: (i % 3) + 1,
        NumDeniedThisWindow: 0,
        NumWaiting: 0,
        Found: true,
      });
    }
  });

  it('lists a key named __proto__ as an entry like any other', async () => {
    await exhaust(base, '__proto__', 2);

    let found: unknown;
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query = `limit=1000${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = (await (await fetch(`${base}/debug?${query}`)).json()) as {
        Instances: Record<string, unknown>;
        NextCursor?: string;
      };
      // JSON.parse makes `__proto__` an own property: read it as one.
      found = Object.getOwnPropertyDescriptor(page.Instances, '__proto__')?.value;
      cursor = page.NextCursor;
      pages++;
    } while (found === undefined && cursor !== undefined && pages < 100);

    expect(found).toMatchObject({ Key: '__proto__', NumApprovedThisWindow: 2, Found: true });
  });

  it('lists one page of 100 keys by default', async () => {
    const prefix = freshKey();
    for (let i = 0; i < 101; i++) await exhaust(base, `${prefix}-${i}`, 1);

    const page = (await (await fetch(`${base}/debug`)).json()) as {
      Instances: Record<string, Debug>;
      NextCursor?: string;
    };

    expect(Object.keys(page.Instances)).toHaveLength(100);
    expect(typeof page.NextCursor).toBe('string');
  });

  it('takes the key URL-decoded from the path', async () => {
    const key = 'tenant/a b?é';

    const res = await post(`${base}/rate/${encodeURIComponent(key)}`);

    expect(res.status).toBe(200);
    expect(await debug(base, key)).toMatchObject({ Key: key, NumApprovedThisWindow: 1 });
  });

  it('takes keys of up to 256 bytes, however long their encoding', async () => {
    const ascii = `${freshKey()}-`.padEnd(256, 'a');
    const euros = '€'.repeat(85); // 255 bytes, 765 characters percent-encoded

    for (const key of [ascii, euros]) {
      const res = await post(`${base}/rate/${encodeURIComponent(key)}`);
      expect(res.status).toBe(200);
      const id = await res.text();
      expect(await debug(base, key)).toMatchObject({ Key: key, Found: true });
      const released = await fetch(
        `${base}/rate/${encodeURIComponent(key)}/${encodeURIComponent(id)}`,
        { method: 'DELETE' },
      );
      expect(await released.json()).toEqual({ released: true });
    }
  });

  it('release by DELETE gives the capacity back, once', async () => {
    const key = freshKey();
    const ids = await exhaust(base, key, 100);
    expect((await post(`${base}/rate/${key}`)).status).toBe(429);

    const released = await fetch(`${base}/rate/${key}/${encodeURIComponent(ids[7]!)}`, {
      method: 'DELETE',
    });

    expect(released.status).toBe(200);
    expect(await released.json()).toEqual({ released: true });
    expect((await post(`${base}/rate/${key}`)).status).toBe(200);
    expect((await post(`${base}/rate/${key}`)).status).toBe(429);
    const again = await fetch(`${base}/rate/${key}/${encodeURIComponent(ids[7]!)}`, {
      method: 'DELETE',
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ released: false });
    const unknown = await fetch(`${base}/rate/${key}/no-such-request`, { method: 'DELETE' });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toEqual({ released: false });
  });

  it('queues canWait requests up to the queue size and refuses the next at once', async () => {
    const key = freshKey();
    await exhaust(base, key, 100);
    const first = openRequest(`${base}/rate/${key}?canWait=true`);
    const second = openRequest(`${base}/rate/${key}?canWait=true`);
    await eventually(
      () => debug(base, key),
      (d) => d.NumWaiting === 2,
    );

    const third = await post(`${base}/rate/${key}?canWait=true`);

    expect(third.status).toBe(429);
    expect(await third.text()).toBe('');
    expect(third.headers.get('retry-after')).not.toBeNull();
    first.request.destroy();
    second.request.destroy();
    await expect(first.answer).resolves.toBe('hung up');
    await expect(second.answer).resolves.toBe('hung up');
  });

  it('takes a waiter that hangs up out of the queue', async () => {
    const key = freshKey();
    await exhaust(base, key, 100);
    const first = openRequest(`${base}/rate/${key}?canWait=1`);
    const second = openRequest(`${base}/rate/${key}?canWait=T`);
    await eventually(
      () => debug(base, key),
      (d) => d.NumWaiting === 2,
    );

    first.request.destroy();

    expect(
      (
        await eventually(
          () => debug(base, key),
          (d) => d.NumWaiting === 1,
        )
      ).NumWaiting,
    ).toBe(1);
    second.request.destroy();
    expect(
      (
        await eventually(
          () => debug(base, key),
          (d) => d.NumWaiting === 0,
        )
      ).NumWaiting,
    ).toBe(0);
    // The queue has room again: the places were given back.
    const third = openRequest(`${base}/rate/${key}?canWait=true`);
    await eventually(
      () => debug(base, key),
      (d) => d.NumWaiting === 1,
    );
    third.request.destroy();
    await expect(third.answer).resolves.toBe('hung up');
  });

  it('refuses client overrides with 403 and charges nothing', async () => {
    const key = freshKey();

    const rate = await post(`${base}/rate/${key}?maxRequests=5`);
    const queue = await post(`${base}/rate/${key}?maxRequestsInQueue=5`);

    expect(rate.status).toBe(403);
    expect(await rate.text()).toMatch(/^maxRequests: .*REQUESTS_CAN_SET_RATE/);
    expect(queue.status).toBe(403);
    expect(await queue.text()).toMatch(/^maxRequestsInQueue: .*REQUESTS_CAN_MOD_QUEUE/);
    expect((await debug(base, key)).Found).toBe(false);
  });

  it('sends the rate-limit headers and the correlation id on admitted and refused requests', async () => {
    const key = freshKey();
    const admitted = await fetch(`${base}/rate/${key}`, {
      method: 'POST',
      headers: { 'X-Correlation-ID': 'trace-42' },
    });
    await exhaust(base, key, 99);

    const refused = await post(`${base}/rate/${key}`);

    expect(admitted.status).toBe(200);
    expect(admitted.headers.get('x-correlation-id')).toBe('trace-42');
    for (const prefix of ['ratelimit', 'x-ratelimit']) {
      expect(admitted.headers.get(`${prefix}-limit`)).toBe('100');
      expect(admitted.headers.get(`${prefix}-remaining`)).toBe('99');
      expect(refused.headers.get(`${prefix}-limit`)).toBe('100');
      expect(refused.headers.get(`${prefix}-remaining`)).toBe('0');
    }
    const reset = Number(admitted.headers.get('ratelimit-reset'));
    expect(Number.isInteger(reset) && reset >= 1 && reset <= HOUR / 1000).toBe(true);
    expect(admitted.headers.get('x-ratelimit-reset')).toBe(String(reset));
    expect(admitted.headers.get('retry-after')).toBeNull();
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= HOUR / 1000).toBe(true);
    expect(refused.headers.get('x-ratelimit-retry-after')).toBe(String(retryAfter));
    expect(refused.headers.get('x-correlation-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('GoCC client overrides (REQUESTS_CAN_SET_RATE and REQUESTS_CAN_MOD_QUEUE true)', () => {
  let running: RunningApp;
  let base: string;

  beforeAll(async () => {
    running = await startApp({
      MAX_REQUESTS: '2',
      WINDOW_MILLIS: String(HOUR),
      MAX_REQUESTS_IN_QUEUE: '5',
      REQUESTS_CAN_SET_RATE: 'true',
      REQUESTS_CAN_MOD_QUEUE: 'true',
    });
    base = running.url;
  });

  afterAll(async () => {
    await running?.app.close();
  });

  beforeEach(async () => {
    await awayFromWindowEnd(HOUR);
  });

  it('lets a request set the rate of its key', async () => {
    const key = freshKey();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await post(`${base}/rate/${key}?maxRequests=3`)).status);

    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await debug(base, key)).toEqual({
      Key: key,
      Config: { WindowMillis: HOUR, MaxRequestsPerWindow: 3, MaxRequestsInQueue: 5 },
      NumApprovedThisWindow: 3,
      NumDeniedThisWindow: 1,
      NumWaiting: 0,
      Found: true,
    });
  });

  it('changes the key’s own limit in place: its count is kept, so no window admits both limits', async () => {
    const key = freshKey();
    const rate = async (maxRequests: number, times: number): Promise<number[]> => {
      const statuses: number[] = [];
      for (let i = 0; i < times; i++) {
        statuses.push((await post(`${base}/rate/${key}?maxRequests=${maxRequests}`)).status);
      }
      return statuses;
    };

    // 3 of 5 spent; at 4, one more; back at 5, one more; then the window is full.
    const spent = await rate(5, 3);
    const lowered = await rate(4, 2);
    const raised = await rate(5, 2);

    expect({ spent, lowered, raised }).toEqual({
      spent: [200, 200, 200],
      lowered: [200, 429],
      raised: [200, 429],
    });
    expect(await debug(base, key)).toEqual({
      Key: key,
      Config: { WindowMillis: HOUR, MaxRequestsPerWindow: 5, MaxRequestsInQueue: 5 },
      NumApprovedThisWindow: 5,
      NumDeniedThisWindow: 2,
      NumWaiting: 0,
      Found: true,
    });
  });

  it('keeps the key’s own limit for its requests without numbers, other keys at the default', async () => {
    const key = freshKey();
    const other = freshKey();
    const statuses: number[] = [(await post(`${base}/rate/${key}?maxRequests=4`)).status];
    for (let i = 0; i < 4; i++) statuses.push((await post(`${base}/rate/${key}`)).status);
    const others: number[] = [];
    for (let i = 0; i < 3; i++) others.push((await post(`${base}/rate/${other}`)).status);

    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect(others).toEqual([200, 200, 429]);
    const listed = (await (await fetch(`${base}/debug?limit=1000`)).json()) as {
      Instances: Record<string, Debug>;
    };
    expect(listed.Instances[key]?.Config.MaxRequestsPerWindow).toBe(4);
    expect(listed.Instances[other]?.Config.MaxRequestsPerWindow).toBe(2);
  });

  it('releases a request admitted under an override', async () => {
    const key = freshKey();
    const id = await (await post(`${base}/rate/${key}?maxRequests=1`)).text();
    expect((await post(`${base}/rate/${key}?maxRequests=1`)).status).toBe(429);

    const released = await fetch(`${base}/rate/${key}/${encodeURIComponent(id)}`, {
      method: 'DELETE',
    });

    expect(await released.json()).toEqual({ released: true });
    expect((await post(`${base}/rate/${key}?maxRequests=1`)).status).toBe(200);
  });

  it('lets a request set the queue size of its key', async () => {
    const noQueue = freshKey();
    for (let i = 0; i < 2; i++) {
      expect((await post(`${base}/rate/${noQueue}?maxRequestsInQueue=0`)).status).toBe(200);
    }
    // Without a queue a waiting request is refused at once (the default queue would take it).
    expect((await post(`${base}/rate/${noQueue}?canWait=true&maxRequestsInQueue=0`)).status).toBe(
      429,
    );

    const key = freshKey();
    for (let i = 0; i < 2; i++) {
      expect((await post(`${base}/rate/${key}?maxRequestsInQueue=1`)).status).toBe(200);
    }
    const waiter = openRequest(`${base}/rate/${key}?canWait=true&maxRequestsInQueue=1`);
    const view = await eventually(
      () => debug(base, key),
      (d) => d.NumWaiting === 1,
    );
    const full = await post(`${base}/rate/${key}?canWait=true&maxRequestsInQueue=1`);

    expect(view.Config).toEqual({
      WindowMillis: HOUR,
      MaxRequestsPerWindow: 2,
      MaxRequestsInQueue: 1,
    });
    expect(full.status).toBe(429);
    waiter.request.destroy();
    await expect(waiter.answer).resolves.toBe('hung up');
  });

  it('answers 400 for override values that are not counts', async () => {
    const res = await post(`${base}/rate/${freshKey()}?maxRequests=-3`);

    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/^maxRequests: /);
  });

  it.each([
    ['maxRequests=0', 'maxRequests'],
    ['maxRequests=1000000001', 'maxRequests'],
    ['maxRequestsInQueue=-1', 'maxRequestsInQueue'],
    ['maxRequestsInQueue=1000000001', 'maxRequestsInQueue'],
  ])('refuses the out-of-range override %s with 400 and charges nothing', async (query, field) => {
    const key = freshKey();
    const res = await post(`${base}/rate/${key}?${query}`);

    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(
      new RegExp(`^${field}: must be an integer \\d+\\.\\.1000000000`),
    );
    expect(await debug(base, key)).toMatchObject({ Found: false, NumApprovedThisWindow: 0 });
  });

  it('takes the ends of the ranges', async () => {
    const key = freshKey();
    expect((await post(`${base}/rate/${key}?maxRequests=1&maxRequestsInQueue=0`)).status).toBe(200);
    expect((await post(`${base}/rate/${key}?maxRequests=1&maxRequestsInQueue=0`)).status).toBe(429);
    expect((await post(`${base}/rate/${freshKey()}?maxRequests=1000000000`)).status).toBe(200);
  });

  it('refuses a key of whitespace only with 400 naming key, on every GoCC route', async () => {
    for (const path of ['/rate/%20%20', '/rate/%E3%80%80?maxRequests=5']) {
      const res = await post(`${base}${path}`);
      expect({ path, status: res.status, text: await res.text() }).toEqual({
        path,
        status: 400,
        text: 'key: must not be whitespace only',
      });
    }
    const release = await fetch(`${base}/rate/%20/r1`, { method: 'DELETE' });
    const view = await fetch(`${base}/debug/%C2%A0`);

    expect([release.status, await release.text()]).toEqual([
      400,
      'key: must not be whitespace only',
    ]);
    expect([view.status, await view.text()]).toEqual([400, 'key: must not be whitespace only']);
  });
});

describe('GoCC waiting (MAX_REQUESTS=1, 1 s windows)', () => {
  const WINDOW_MS = 1_000;
  let running: RunningApp;
  let base: string;

  beforeAll(async () => {
    running = await startApp({
      MAX_REQUESTS: '1',
      WINDOW_MILLIS: String(WINDOW_MS),
      MAX_REQUESTS_IN_QUEUE: '10',
    });
    base = running.url;
  });

  afterAll(async () => {
    await running?.app.close();
  });

  it('admits canWait requests in later windows, in the order they arrived', async () => {
    const key = freshKey();
    const count = 6;
    const answered: number[] = [];
    const statuses: number[] = [];
    let mostWaiting = 0;
    const requests: Promise<void>[] = [];
    // The waiters held, read from the server's own state (a /debug round trip per poll made each
    // step slower than a window on a loaded machine, so the queue never held two).
    const limiter = running.app.get(LimiterService);
    const waiting = async (): Promise<number> => {
      const stats = await limiter.stats({ key });
      return stats.ok ? stats.value.queued : 0;
    };
    // Start early in a window: the first waiters find it full, a step being far shorter than it.
    await awayFromWindowEnd(WINDOW_MS, WINDOW_MS - 100);
    for (let i = 0; i < count; i++) {
      const sent = fetch(`${base}/rate/${key}?canWait=true`, { method: 'POST' }).then(
        async (res) => {
          statuses[i] = res.status;
          await res.text();
          answered.push(i);
        },
      );
      requests.push(sent);
      // The next request leaves only once the server holds this one (answered or queued).
      const deadline = Date.now() + 10_000;
      for (;;) {
        const held = await waiting();
        mostWaiting = Math.max(mostWaiting, held);
        if (answered.length + held >= i + 1) break;
        if (Date.now() > deadline) throw new Error(`request ${i} not held within 10 s`);
        await new Promise((r) => setTimeout(r, 2));
      }
    }
    await Promise.all(requests);

    expect(statuses).toEqual(Array.from({ length: count }, () => 200));
    expect(answered).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(mostWaiting).toBeGreaterThanOrEqual(2);
  }, 30_000);
});

describe('GoCC config file: entries that match one key merge in file order', () => {
  let running: RunningApp;
  let base: string;

  beforeAll(async () => {
    const file = join(dataDir, 'gocc-merge.json');
    writeFileSync(
      file,
      JSON.stringify({
        keys: [
          {
            key_pattern: '^m-',
            key_pattern_is_regex: true,
            window_millis: HOUR,
            max_requests_in_queue: 1,
          },
          { key_pattern: '-x$', key_pattern_is_regex: true, max_requests_per_window: 3 },
          { key_pattern: 'm-9', max_requests_per_window: 5 },
        ],
      }),
    );
    running = await startApp({
      CONFIG_FILE: file,
      MAX_REQUESTS: '100',
      WINDOW_MILLIS: '1000',
      MAX_REQUESTS_IN_QUEUE: '400',
    });
    base = running.url;
  });

  afterAll(async () => {
    await running?.app.close();
  });

  beforeEach(async () => {
    await awayFromWindowEnd(HOUR);
  });

  it('decides a key both regexes match by the numbers of both, each from the entry that sets it', async () => {
    const key = `m-${randomUUID()}-x`;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(`${base}/rate/${key}`)).status);

    // ^m- sets the window and the queue, -x$ the limit; the environment's 100 applies to neither.
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await debug(base, key)).Config).toEqual({
      WindowMillis: HOUR,
      MaxRequestsPerWindow: 3,
      MaxRequestsInQueue: 1,
    });
  });

  it('merges a literal key’s entry over the regexes before it', async () => {
    expect((await debug(base, 'm-9')).Config).toEqual({
      WindowMillis: HOUR,
      MaxRequestsPerWindow: 5,
      MaxRequestsInQueue: 1,
    });
    expect((await debug(base, `m-${randomUUID()}`)).Config).toEqual({
      WindowMillis: HOUR,
      MaxRequestsPerWindow: 100,
      MaxRequestsInQueue: 1,
    });
  });
});

describe('GoCC client overrides on a quota Redis decides (scope: cluster)', () => {
  let running: RunningApp;
  let base: string;

  beforeAll(async () => {
    const file = join(dataDir, 'cluster-default.yaml');
    writeFileSync(file, 'defaults:\n  scope: cluster\nquotas: []\n');
    running = await startApp({
      CONFIG_FILE: file,
      REDIS_URL: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
      MAX_REQUESTS: '2',
      WINDOW_MILLIS: String(HOUR),
      REQUESTS_CAN_SET_RATE: 'true',
      REQUESTS_CAN_MOD_QUEUE: 'true',
    });
    base = running.url;
  });

  afterAll(async () => {
    await running?.app.close();
  });

  it.each(['maxRequests=5', 'maxRequestsInQueue=3'])(
    'refuses %s with 409 naming it, and charges nothing',
    async (query) => {
      const key = freshKey();
      const res = await post(`${base}/rate/${key}?${query}`);

      expect(res.status).toBe(409);
      expect(await res.text()).toMatch(
        new RegExp(
          `^${query.split('=')[0]}: quota "default" is decided in Redis \\(scope: cluster\\)`,
        ),
      );
      expect(await debug(base, key)).toMatchObject({ Found: false, NumApprovedThisWindow: 0 });
    },
  );
});
