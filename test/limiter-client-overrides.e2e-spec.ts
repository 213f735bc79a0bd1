/**
 * GoCC's client overrides on a real limiter process, over HTTP and NATS, with both
 * REQUESTS_CAN_SET_RATE and REQUESTS_CAN_MOD_QUEUE true: they apply only to quotas that take them
 * (`clientOverrides`: GoCC's default quota, or a quota that opts in), never to a config quota that
 * does not or to a provider model, and a key's own queue never holds a caller longer than its
 * quota's `queue.maxWaitMs`, however large the client makes it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { waitUntil } from './support/nats-process';
import { awayFromWindowEnd } from './support/window';

jest.setTimeout(90_000);

type Json = Record<string, unknown>;

const NATS_URL = 'nats://127.0.0.1:4222';
const HOUR = 3_600_000;
/** The `waits` quota's own maxWaitMs: a key's queue may be larger, never its waits longer. */
const MAX_WAIT_MS = 2_000;

const CONFIG = `
quotas:
  - name: api
    match: "api-*"
    limits: [{ name: rph, limit: 2, window: 1h }]
  - name: waits
    match: "w-*"
    limits: [{ name: rph, limit: 1, window: 1h }]
    queue: { maxSize: 5, maxWaitMs: ${MAX_WAIT_MS} }
    clientOverrides: true
providers: [openai]
`;

const dataDir = mkdtempSync(join(tmpdir(), 'limiter-client-overrides-'));
const prefix = uniquePrefix();
let limiter: LimiterProcess;
let nc: NatsConnection;

async function ask(subject: string, body: Json, timeout = 10_000): Promise<Json> {
  const msg = await nc.request(`${prefix}.${subject}`, Buffer.from(JSON.stringify(body)), {
    timeout,
  });
  return JSON.parse(Buffer.from(msg.data).toString('utf8')) as Json;
}

async function rate(path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${limiter.url}/rate/${path}`, { method: 'POST' });
  return { status: res.status, text: await res.text() };
}

async function acquireOverHttp(key: string): Promise<Json> {
  const res = await fetch(`${limiter.url}/v1/acquire`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  });
  return (await res.json()) as Json;
}

/** The limit sizes of the key's quota as NATS callers see them: `name` → `limit`. */
async function limitsOverNats(key: string): Promise<Record<string, unknown>> {
  const stats = await ask('stats', { key });
  const limits = (stats['limits'] ?? []) as { name: string; limit: number }[];
  return Object.fromEntries(limits.map((l) => [l.name, l.limit]));
}

beforeAll(async () => {
  const configFile = join(dataDir, 'quotas.yaml');
  writeFileSync(configFile, CONFIG);
  limiter = await startLimiter({
    NATS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    NATS_QUEUE_GROUP: `q-${randomUUID()}`,
    DATA_DIR: dataDir,
    CONFIG_FILE: configFile,
    MAX_REQUESTS: '2',
    WINDOW_MILLIS: String(HOUR),
    MAX_REQUESTS_IN_QUEUE: '2',
    REQUESTS_CAN_SET_RATE: 'true',
    REQUESTS_CAN_MOD_QUEUE: 'true',
  });
  nc = await connect({ servers: NATS_URL });
  await waitUntil('the limiter to subscribe', async () => {
    const key = `probe-${randomUUID()}`;
    return (await ask('stats', { key }, 500).catch((): Json => ({})))['key'] === key;
  });
});

afterAll(async () => {
  await nc?.close();
  await limiter?.stop('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(async () => {
  await awayFromWindowEnd(HOUR, 20_000);
});

describe('client overrides on a quota that does not take them', () => {
  it('refuses maxRequests on a key of a config quota with 403; /v1 and NATS keep its limit', async () => {
    const key = `api-${randomUUID()}`;

    const raise = await rate(`${key}?maxRequests=1000000`);
    const queue = await rate(`${key}?maxRequestsInQueue=50`);

    expect(raise).toEqual({
      status: 403,
      text: `maxRequests: quota "api" does not let clients set a key's limits (its clientOverrides is not true)`,
    });
    expect(queue.status).toBe(403);
    expect(queue.text).toMatch(/^maxRequestsInQueue: quota "api" .*clientOverrides/);
    const replies = [
      await acquireOverHttp(key),
      await ask('acquire', { key }),
      await acquireOverHttp(key),
      await ask('acquire', { key }),
    ];
    expect(replies.map((r) => [r['code'], r['limit']])).toEqual([
      ['OK', 2],
      ['OK', 2],
      ['RATE_LIMITED', 2],
      ['RATE_LIMITED', 2],
    ]);
    expect(await limitsOverNats(key)).toEqual({ rph: 2 });
  });

  it('refuses maxRequests on a provider model’s key: its rpm stays the provider’s', async () => {
    const refused = await rate('gpt-4o?maxRequests=1000000');

    expect(refused.status).toBe(403);
    expect(refused.text).toMatch(/^maxRequests: quota "gpt-4o" .*clientOverrides/);
    expect(await limitsOverNats('gpt-4o')).toMatchObject({ rpm: 500, tpm: 30_000 });
  });
});

describe('client overrides on quotas that take them', () => {
  it('sets the key’s own limit in GoCC’s default quota, for every caller of that key', async () => {
    const key = `d-${randomUUID()}`;

    expect((await rate(`${key}?maxRequests=3`)).status).toBe(200);
    const replies = [
      await ask('acquire', { key }),
      await acquireOverHttp(key),
      await ask('acquire', { key }),
    ];

    // As GoCC's limiter: the key's numbers are the key's, whoever asks next (the override's own
    // request was the first of the 3).
    expect(replies.map((r) => [r['code'], r['limit']])).toEqual([
      ['OK', 3],
      ['OK', 3],
      ['RATE_LIMITED', 3],
    ]);
    expect(await limitsOverNats(`d-${randomUUID()}`)).toEqual({ rph: 2 });
  });

  it('answers every NATS waiter of a key whose queue a client enlarged by its quota’s maxWaitMs', async () => {
    const key = `w-${randomUUID()}`;
    // The client's queue of 10 000 at 1 an hour would drain in 10 000 hours; the quota allows 2 s.
    expect((await rate(`${key}?maxRequestsInQueue=10000`)).status).toBe(200);
    const count = 30;

    const waiters = Array.from({ length: count }, (_, i) =>
      ask('acquire', { key, wait: true, requestId: `w-${i}` }, 30_000),
    );
    const replies = await Promise.all(waiters);

    // More waiters than the quota's own queue of 5: the key's queue of 10 000 held them all, and
    // each was answered at its deadline, waiting no less than the quota's 2 s (nothing admits:
    // the hour's one request is spent).
    expect(replies.map((r) => r['code'])).toEqual(
      Array.from({ length: count }, () => 'WAIT_TIMEOUT'),
    );
    expect(replies.every((r) => (r['waitedMs'] as number) >= MAX_WAIT_MS)).toBe(true);
    expect(await ask('stats', { key })).toMatchObject({ queued: 0 });
  });

  it('refuses a queue above 10 000 places with 409 naming maxRequestsInQueue', async () => {
    const key = `w-${randomUUID()}`;

    const refused = await rate(`${key}?maxRequestsInQueue=10001`);

    expect(refused.status).toBe(409);
    expect(refused.text).toMatch(/^maxRequestsInQueue: .*must be an integer 0\.\.10000/);
  });
});
