/**
 * RateLimitModule's `headers` option on a real limiter over the real NATS, on Fastify and on
 * Express: each mode sets exactly its rate-limit headers on an admitted and a refused call, and
 * leaving it out keeps today's headers. The reply does not carry its limit's window, so the
 * guard's RateLimit-Policy has no `w`.
 */
import { randomUUID } from 'node:crypto';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { connect } from 'nats';
import {
  RateLimit,
  RateLimitKeys,
  RateLimitModule,
  type RateLimitHeaderMode,
  type RateLimitModuleOptions,
} from '@app/client/nest';
import {
  NATS_URL,
  NEST_HOOK_TIMEOUT_MS,
  hourlyQuota,
  startNestTestLimiter,
  type NestTestLimiter,
} from './support/nest-limiter';

jest.setTimeout(NEST_HOOK_TIMEOUT_MS);

const LIMIT = 2;

@Controller('limited')
class LimitedController {
  @Get()
  @RateLimit({ quota: 'guarded', key: RateLimitKeys.header('x-api-key') })
  get(): { ok: true } {
    return { ok: true };
  }
}

type Platform = 'fastify' | 'express';
type Mode = RateLimitHeaderMode | 'unset';

const LEGACY = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];
const DRAFT = ['ratelimit', 'ratelimit-policy'];
const LEGACY_REFUSED = ['retry-after', 'x-ratelimit-retry-after'];

const EXPECTED: Record<Mode, { admitted: string[]; refused: string[] }> = {
  unset: { admitted: LEGACY, refused: [...LEGACY, ...LEGACY_REFUSED] },
  legacy: { admitted: LEGACY, refused: [...LEGACY, ...LEGACY_REFUSED] },
  both: { admitted: [...LEGACY, ...DRAFT], refused: [...LEGACY, ...DRAFT, ...LEGACY_REFUSED] },
  draft: { admitted: DRAFT, refused: [...DRAFT, 'retry-after'] },
};

/** The response's rate-limit headers, whatever the platform adds besides. */
function rateLimitHeaderNames(res: Response): string[] {
  return [...res.headers.keys()].filter((name) => /ratelimit|retry-after/.test(name)).sort();
}

function checkHeaders(mode: Mode, res: Response, allowed: boolean, remaining: number): void {
  expect(rateLimitHeaderNames(res)).toEqual(
    [...EXPECTED[mode][allowed ? 'admitted' : 'refused']].sort(),
  );
  const h = res.headers;
  if (mode !== 'draft') {
    expect(h.get('ratelimit-limit')).toBe(String(LIMIT));
    expect(h.get('ratelimit-remaining')).toBe(String(remaining));
    expect(h.get('x-ratelimit-remaining')).toBe(String(remaining));
  }
  if (mode === 'both' || mode === 'draft') {
    expect(h.get('ratelimit-policy')).toBe(`"per-hour";q=${LIMIT}`);
    const item = /^"per-hour";r=([0-9]+);t=([0-9]+)$/.exec(h.get('ratelimit') ?? '');
    expect(item).not.toBeNull();
    expect(Number(item![1])).toBe(remaining);
    expect(Number(item![2])).toBeGreaterThan(0);
    if (mode === 'both') expect(item![2]).toBe(h.get('ratelimit-reset'));
  }
  if (!allowed) expect(Number(h.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

let limiter: NestTestLimiter;

beforeAll(async () => {
  limiter = await startNestTestLimiter([hourlyQuota('guarded', LIMIT)]);
});
afterAll(async () => {
  await limiter?.stop();
});

describe.each<[Mode, Platform]>([
  ['unset', 'fastify'],
  ['legacy', 'express'],
  ['both', 'fastify'],
  ['both', 'express'],
  ['draft', 'fastify'],
  ['draft', 'express'],
])('headers %s (%s)', (mode, platform) => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RateLimitModule.forRoot({
          servers: NATS_URL,
          subjectPrefix: limiter.prefix,
          ...(mode === 'unset' ? {} : { headers: mode }),
        }),
      ],
      controllers: [LimitedController],
    }).compile();
    app = moduleRef.createNestApplication(
      platform === 'fastify' ? new FastifyAdapter() : new ExpressAdapter(),
      { logger: false },
    );
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('sets exactly its headers on an admitted and a refused call', async () => {
    const key = randomUUID();
    const get = (): Promise<Response> => fetch(`${url}/limited`, { headers: { 'x-api-key': key } });
    for (let remaining = LIMIT - 1; remaining >= 0; remaining--) {
      const res = await get();
      expect(res.status).toBe(200);
      checkHeaders(mode, res, true, remaining);
    }
    const refused = await get();
    expect(refused.status).toBe(429);
    checkHeaders(mode, refused, false, 0);
  });
});

it('refuses a headers option it does not know when the module starts', async () => {
  // The caller's connection: the module never closes it, so nothing is left open when it fails.
  const nc = await connect({ servers: NATS_URL });
  try {
    const options = { connection: nc, subjectPrefix: limiter.prefix, headers: 'rfc' };
    await expect(
      Test.createTestingModule({
        imports: [RateLimitModule.forRoot(options as RateLimitModuleOptions)],
        controllers: [LimitedController],
      }).compile(),
    ).rejects.toThrow('RateLimitModule headers must be one of legacy, both, draft, got "rfc"');
  } finally {
    await nc.close();
  }
});
