/**
 * A corpus of bad HTTP inputs: each gets the right status and a reply naming the bad field, the
 * process stays up, and nothing is charged.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createLimiterApp } from '../apps/limiter/src/app';

/** Every otherwise valid part of the corpus names this key, so its stats show any charge. */
const VICTIM = 'victim';
const longKey = 'k'.repeat(300);
const pathKey = (key: string): string => encodeURIComponent(key);

interface BadInput {
  readonly label: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly path: string;
  /** A string is sent as it is; anything else as JSON. */
  readonly body?: unknown;
  readonly contentType?: string;
  readonly status: number;
  /** The field the reply must name (the start of `reason`, or of a text body). */
  readonly field: string;
}

const json = (
  label: string,
  path: string,
  body: unknown,
  field: string,
  status = 400,
): BadInput => ({ label, method: 'POST', path, body, status, field });

const acquire = (label: string, body: unknown, field: string, status = 400): BadInput =>
  json(label, '/v1/acquire', body, field, status);

const gocc = (
  label: string,
  method: BadInput['method'],
  path: string,
  field: string,
  status = 400,
): BadInput => ({ label, method, path, status, field });

const corpus: readonly BadInput[] = [
  // the body as a whole
  acquire('not JSON', '{"key":', 'body'),
  acquire('empty body', '', 'body'),
  acquire('whitespace body', '   \n', 'body'),
  acquire('null body', 'null', 'body'),
  acquire('array body', [{ key: VICTIM }], 'body'),
  acquire('string body', '"victim"', 'body'),
  acquire('number body', '42', 'body'),
  acquire('form-encoded body', 'key=victim&cost=1', 'body'),
  acquire('JSON with trailing garbage', '{"key":"victim"} x', 'body'),
  // key
  acquire('missing key', { cost: 1 }, 'key'),
  acquire('number key', { key: 7 }, 'key'),
  acquire('null key', { key: null }, 'key'),
  acquire('empty key', { key: '' }, 'key'),
  acquire('300-byte key', { key: longKey }, 'key'),
  acquire('NUL in key', { key: 'victim\u0000' }, 'key'),
  acquire('newline in key', { key: 'vic\ntim' }, 'key'),
  acquire('DEL in key', { key: 'victim\u007f' }, 'key'),
  acquire('lone surrogate in key', '{"key":"victim\\ud800"}', 'key'),
  acquire('key of spaces', { key: '   ' }, 'key'),
  acquire('key of no-break and ideographic spaces', { key: '\u00a0\u3000' }, 'key'),
  // quota
  acquire('number quota', { key: VICTIM, quota: 5 }, 'quota'),
  acquire('null quota', { key: VICTIM, quota: null }, 'quota'),
  acquire('quota with a space', { key: VICTIM, quota: 'bad name' }, 'quota'),
  acquire('unknown quota', { key: VICTIM, quota: 'no-such-quota' }, 'quota', 404),
  // cost
  acquire('NaN as a string', { key: VICTIM, cost: 'NaN' }, 'cost'),
  acquire('NaN literal', '{"key":"victim","cost":NaN}', 'body'),
  acquire('negative cost', { key: VICTIM, cost: -1 }, 'cost'),
  acquire('fractional cost', { key: VICTIM, cost: 1.5 }, 'cost'),
  acquire('huge cost', { key: VICTIM, cost: 1e300 }, 'cost'),
  acquire('unsafe integer cost', '{"key":"victim","cost":9007199254740993}', 'cost'),
  acquire('boolean cost', { key: VICTIM, cost: true }, 'cost'),
  acquire('array cost', { key: VICTIM, cost: [1] }, 'cost'),
  acquire('null cost', { key: VICTIM, cost: null }, 'cost'),
  acquire('negative tokens', { key: VICTIM, cost: { tokens: -5 } }, 'cost.tokens'),
  acquire('fractional tokens', { key: VICTIM, cost: { tokens: 2.5 } }, 'cost.tokens'),
  acquire('string requests', { key: VICTIM, cost: { requests: '1' } }, 'cost.requests'),
  acquire('huge requests', { key: VICTIM, cost: { requests: 1e20 } }, 'cost.requests'),
  acquire('bad unit name', { key: VICTIM, cost: { 'Bad-Unit': 1 } }, 'cost["Bad-Unit"]'),
  // the other fields
  acquire('string wait', { key: VICTIM, wait: 'yes' }, 'wait'),
  acquire('negative maxWaitMs', { key: VICTIM, maxWaitMs: -1 }, 'maxWaitMs'),
  acquire('fractional maxWaitMs', { key: VICTIM, maxWaitMs: 1.5 }, 'maxWaitMs'),
  acquire('empty requestId', { key: VICTIM, requestId: '' }, 'requestId'),
  acquire('requestId with a newline', { key: VICTIM, requestId: 'a\nb' }, 'requestId'),
  acquire('200-char requestId', { key: VICTIM, requestId: 'r'.repeat(200) }, 'requestId'),
  acquire('string deadline', { key: VICTIM, deadline: 'tomorrow' }, 'deadline'),
  // size
  acquire('1 MB payload', { key: 'x'.repeat(1_000_000) }, 'key'),
  acquire('payload over the body limit', { key: 'x'.repeat(1_100_000) }, 'body', 413),
  // decide
  json('decide: not JSON', '/v1/decide', '{', 'body'),
  json('decide: negative cost', '/v1/decide', { key: VICTIM, cost: -1 }, 'cost'),
  json('decide: unknown quota', '/v1/decide', { key: VICTIM, quota: 'nope' }, 'quota', 404),
  // batch
  json('batch: not JSON', '/v1/acquire/batch', '[', 'body'),
  json('batch: no requests', '/v1/acquire/batch', {}, 'requests'),
  json('batch: requests not an array', '/v1/acquire/batch', { requests: 'all' }, 'requests'),
  json(
    'batch: 1001 entries',
    '/v1/acquire/batch',
    { requests: Array.from({ length: 1001 }, () => ({ key: VICTIM })) },
    'requests',
  ),
  // release
  json('release: not JSON', '/v1/release', 'release me', 'body'),
  json('release: missing key', '/v1/release', { requestId: 'r1' }, 'key'),
  json('release: blank key', '/v1/release', { key: ' ', requestId: 'r1' }, 'key'),
  json('release: number requestId', '/v1/release', { key: VICTIM, requestId: 5 }, 'requestId'),
  json('release: empty leaseId', '/v1/release', { key: VICTIM, leaseId: '' }, 'leaseId'),
  json('release: unknown quota', '/v1/release', { key: VICTIM, quota: 'nope' }, 'quota', 404),
  // usage
  json('usage: missing cost', '/v1/usage', { key: VICTIM }, 'cost'),
  json('usage: negative cost', '/v1/usage', { key: VICTIM, cost: { tokens: -3 } }, 'cost.tokens'),
  json('usage: control character in key', '/v1/usage', { key: '\u0007', cost: 1 }, 'key'),
  json('usage: blank key', '/v1/usage', { key: '  ', cost: 1 }, 'key'),
  json('decide: blank key', '/v1/decide', { key: '\u2003' }, 'key'),
  json('usage: unknown quota', '/v1/usage', { key: VICTIM, quota: 'nope', cost: 1 }, 'quota', 404),
  // stats
  gocc('stats: 300-byte key', 'GET', `/v1/stats/${longKey}`, 'key'),
  gocc('stats: control character in key', 'GET', '/v1/stats/%01victim', 'key'),
  gocc('stats: blank key', 'GET', '/v1/stats/%20%20', 'key'),
  gocc('stats: bad quota name', 'GET', '/v1/stats/victim?quota=bad!', 'quota'),
  gocc('stats: quota given twice', 'GET', '/v1/stats/victim?quota=a&quota=b', 'quota'),
  gocc('stats: unknown quota', 'GET', '/v1/stats/victim?quota=nope', 'quota', 404),
  // refused by the router itself, before any handler: still a 400 naming the field
  gocc('rate: malformed percent-encoding', 'POST', '/rate/%ZZ', 'key'),
  gocc('debug: malformed percent-encoding', 'GET', '/debug/vic%E0%A4tim', 'key'),
  gocc('stats: malformed percent-encoding', 'GET', '/v1/stats/%ZZ', 'key'),
  gocc('release: malformed request id', 'DELETE', '/rate/victim/%ZZ', 'requestId'),
  gocc('rate: key longer than the router takes', 'POST', `/rate/${'k'.repeat(3000)}`, 'key'),
  // GoCC routes
  gocc('rate: empty key', 'POST', '/rate/', 'key'),
  gocc('rate: empty key by GET', 'GET', '/rate/', 'key'),
  gocc('rate: 300-byte key', 'POST', `/rate/${longKey}`, 'key'),
  gocc('rate: NUL in key', 'POST', '/rate/victim%00', 'key'),
  gocc('rate: newline in key', 'POST', '/rate/vic%0Atim', 'key'),
  gocc('rate: DEL in key', 'GET', '/rate/%7Fvictim', 'key'),
  gocc('rate: C1 control in key', 'POST', '/rate/%C2%85victim', 'key'),
  gocc('rate: key of spaces', 'POST', '/rate/%20%20%20', 'key'),
  gocc('rate: key of no-break spaces by GET', 'GET', '/rate/%C2%A0%C2%A0', 'key'),
  gocc('rate: bad canWait', 'POST', '/rate/victim?canWait=maybe', 'canWait'),
  gocc('rate: canWait twice', 'POST', '/rate/victim?canWait=true&canWait=false', 'canWait'),
  gocc('rate: empty canWait', 'POST', '/rate/victim?canWait=', 'canWait'),
  gocc('rate: negative maxRequests', 'POST', '/rate/victim?maxRequests=-1', 'maxRequests'),
  gocc('rate: fractional maxRequests', 'POST', '/rate/victim?maxRequests=1.5', 'maxRequests'),
  // out of range is bad input, answered before the 403 for a client not allowed to override
  gocc('rate: zero maxRequests', 'POST', '/rate/victim?maxRequests=0', 'maxRequests'),
  gocc('rate: maxRequests over 10^9', 'GET', '/rate/victim?maxRequests=1000000001', 'maxRequests'),
  gocc(
    'rate: negative maxRequestsInQueue',
    'POST',
    '/rate/victim?maxRequestsInQueue=-1',
    'maxRequestsInQueue',
  ),
  gocc(
    'rate: maxRequestsInQueue over 10^9',
    'POST',
    '/rate/victim?maxRequestsInQueue=99999999999',
    'maxRequestsInQueue',
  ),
  gocc('rate: NaN maxRequests', 'POST', '/rate/victim?maxRequests=NaN', 'maxRequests'),
  gocc(
    'rate: text maxRequestsInQueue',
    'POST',
    '/rate/victim?maxRequestsInQueue=lots',
    'maxRequestsInQueue',
  ),
  gocc('rate: maxRequests not allowed', 'POST', '/rate/victim?maxRequests=5', 'maxRequests', 403),
  gocc(
    'rate: maxRequestsInQueue not allowed',
    'GET',
    '/rate/victim?maxRequestsInQueue=5',
    'maxRequestsInQueue',
    403,
  ),
  gocc('release: newline in requestId', 'DELETE', '/rate/victim/a%0Ab', 'requestId'),
  gocc('release: 300-byte key', 'DELETE', `/rate/${longKey}/r1`, 'key'),
  gocc('release: empty key', 'DELETE', '/rate//r1', 'key'),
  gocc('release: blank key', 'DELETE', '/rate/%20/r1', 'key'),
  gocc('debug: NUL in key', 'GET', '/debug/%00', 'key'),
  gocc('debug: empty key', 'GET', '/debug/', 'key'),
  gocc('debug: blank key', 'GET', '/debug/%20%20', 'key'),
  gocc('debug list: zero limit', 'GET', '/debug?limit=0', 'limit'),
  gocc('debug list: limit over 1000', 'GET', '/debug?limit=1001', 'limit'),
  gocc('debug list: text limit', 'GET', '/debug?limit=all', 'limit'),
  gocc('debug list: limit twice', 'GET', '/debug?limit=1&limit=2', 'limit'),
  gocc('debug list: made-up cursor', 'GET', '/debug?cursor=page-2', 'cursor'),
  gocc('debug list: empty cursor', 'GET', '/debug?cursor=', 'cursor'),
  gocc('debug: 300-byte key', 'GET', `/debug/${pathKey(longKey)}`, 'key'),
];

async function send(base: string, input: BadInput): Promise<Response> {
  const body =
    input.body === undefined
      ? undefined
      : typeof input.body === 'string'
        ? input.body
        : JSON.stringify(input.body);
  return fetch(`${base}${input.path}`, {
    method: input.method,
    ...(body !== undefined && {
      body,
      headers: { 'content-type': input.contentType ?? 'application/json' },
    }),
  });
}

/** JSON replies name the field in `reason` (and `field` when they have one); text replies lead with it. */
async function namedField(res: Response): Promise<string> {
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) return text;
  const reply = JSON.parse(text) as { reason?: unknown; field?: unknown };
  if (typeof reply.field === 'string') expect(String(reply.reason)).toMatch(/.+/);
  return String(reply.reason);
}

describe('bad HTTP inputs', () => {
  let app: NestFastifyApplication;
  let base: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-http-bad-'));

  beforeAll(async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      NATS_URL: '',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'error',
      MAX_REQUESTS: '100',
      WINDOW_MILLIS: '3600000',
    });
    try {
      app = await createLimiterApp({ logger: false });
      await app.listen(0, '127.0.0.1');
      base = await app.getUrl();
    } finally {
      process.env = saved;
    }
  });

  afterAll(async () => {
    await app?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('has at least 50 cases', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(50);
  });

  it.each(corpus.map((input) => [input.label, input] as const))('%s', async (_label, input) => {
    const res = await send(base, input);

    expect(res.status).toBe(input.status);
    const reason = await namedField(res);
    if (input.status === 404) {
      expect(reason).toMatch(/quota/);
    } else {
      expect(reason.startsWith(`${input.field}: `)).toBe(true);
    }
  });

  it('answers a batch entry that waits in its place, naming the entry', async () => {
    const res = await send(
      base,
      json(
        'batch entry that waits',
        '/v1/acquire/batch',
        { requests: [{ key: VICTIM, wait: true }] },
        '',
      ),
    );

    expect(res.status).toBe(200);
    const { replies } = (await res.json()) as { replies: { code: string; reason: string }[] };
    expect(replies).toEqual([
      expect.objectContaining({
        code: 'INVALID_REQUEST',
        reason: expect.stringMatching(/^requests\[0\]\.wait: /),
      }),
    ]);
  });

  it('is still up and charged nothing', async () => {
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('OK');

    const stats = await fetch(`${base}/v1/stats/${VICTIM}`);
    expect(await stats.json()).toEqual({
      key: VICTIM,
      quota: 'default',
      limits: [expect.objectContaining({ name: 'rph', limit: 100, used: 0, remaining: 100 })],
      queued: 0,
      inFlight: 0,
      approved: 0,
      denied: 0,
      scope: 'local',
    });
    const debug = await fetch(`${base}/debug/${VICTIM}`);
    expect(await debug.json()).toMatchObject({ Found: false, NumApprovedThisWindow: 0 });
  });
});
