/**
 * DEBUG_TOKEN against the real limiter process (issue 25 point 11): the routes that show the keys
 * a replica holds and their counts answer 401 without `Authorization: Bearer <DEBUG_TOKEN>`, over
 * HTTP/1.1 and h2c alike, in their route's shape; the other routes do not ask for it.
 */
import { InvalidRequestError, RateLimitHttpClient } from '@app/client';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientHttp2Session } from 'node:http2';
import { h2Request, h2Session } from './support/h2-client';
import { startLimiter, type LimiterProcess } from './support/limiter-process';

jest.setTimeout(90_000);

const TOKEN = `debug-${randomUUID()}`;
const HOUR = 3_600_000;
const MISSING = 'authorization: must be Bearer <DEBUG_TOKEN> (this route lists keys)';
const WRONG = 'authorization: the bearer token is not DEBUG_TOKEN';

interface Answer {
  readonly status: number;
  readonly authenticate: string | null | undefined;
  readonly body: string;
}

describe('DEBUG_TOKEN', () => {
  let limiter: LimiterProcess;
  let session: ClientHttp2Session;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-debug-token-'));
  const key = `listed-${randomUUID()}`;

  beforeAll(async () => {
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: dataDir,
      DEBUG_TOKEN: TOKEN,
      WINDOW_MILLIS: String(HOUR),
    });
    session = await h2Session(limiter.port);
    expect((await fetch(`${limiter.url}/rate/${key}`, { method: 'POST' })).status).toBe(200);
  });

  afterAll(async () => {
    session?.close();
    await limiter?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const overHttp1 = async (path: string, headers: Record<string, string>): Promise<Answer> => {
    const res = await fetch(`${limiter.url}${path}`, { headers });
    return {
      status: res.status,
      authenticate: res.headers.get('www-authenticate'),
      body: await res.text(),
    };
  };
  const overH2c = async (path: string, headers: Record<string, string>): Promise<Answer> => {
    const answer = await h2Request(session, path, { headers });
    const authenticate = answer.headers['www-authenticate'];
    return { status: answer.status, authenticate, body: answer.body };
  };

  describe.each([
    ['HTTP/1.1', overHttp1],
    ['h2c', overH2c],
  ])('over %s', (_protocol, get) => {
    it.each([['/debug'], [`/debug/KEY`]])(
      '%s answers 401 text without the token',
      async (route) => {
        const path = route.replace('KEY', key);
        for (const [headers, reason] of [
          [{}, MISSING],
          [{ authorization: 'Bearer not-the-token' }, WRONG],
          [{ authorization: TOKEN }, MISSING],
        ] as const) {
          expect(await get(path, headers)).toEqual({
            status: 401,
            authenticate: 'Bearer',
            body: reason,
          });
        }
      },
    );

    it('/v1/stats/:key answers 401 with a reply naming authorization without the token', async () => {
      const answer = await get(`/v1/stats/${key}`, { authorization: 'Bearer wrong' });
      expect([answer.status, answer.authenticate]).toEqual([401, 'Bearer']);
      expect(JSON.parse(answer.body)).toEqual({
        ok: false,
        allowed: false,
        code: 'INVALID_REQUEST',
        reason: WRONG,
        field: 'authorization',
      });
    });

    it('lists the keys and their counts with the token', async () => {
      const authorization = `Bearer ${TOKEN}`;
      const list = await get('/debug?limit=1000', { authorization });
      expect(list.status).toBe(200);
      expect(JSON.parse(list.body).Instances[key]).toMatchObject({ Found: true });
      const one = await get(`/debug/${key}`, { authorization: `bearer  ${TOKEN}` });
      expect([one.status, JSON.parse(one.body).Found]).toEqual([200, true]);
      const stats = await get(`/v1/stats/${key}`, { authorization });
      expect(stats.status).toBe(200);
      expect(JSON.parse(stats.body)).toMatchObject({ key, limits: [{ used: 1 }] });
    });

    it('leaves the other routes open', async () => {
      expect((await get('/healthz', {})).status).toBe(200);
      expect((await get('/metrics', {})).status).toBe(200);
      expect((await get(`/rate/${randomUUID()}`, {})).status).toBe(200);
    });
  });

  it('answers HEAD on a listing route 401 without the token too', async () => {
    const res = await fetch(`${limiter.url}/debug`, { method: 'HEAD' });
    expect(res.status).toBe(401);
  });

  it('takes the token from the HTTP client’s headers; without it the client names the field', async () => {
    const open = new RateLimitHttpClient({
      baseUrl: limiter.url,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const bare = new RateLimitHttpClient({ baseUrl: limiter.url });
    try {
      expect(await open.stats({ key })).toMatchObject({ key, limits: [{ used: 1 }] });
      const refused = await bare.stats({ key }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InvalidRequestError);
      expect(refused).toMatchObject({ field: 'authorization', reason: MISSING });
    } finally {
      await Promise.all([open.close(), bare.close()]);
    }
  });
});
