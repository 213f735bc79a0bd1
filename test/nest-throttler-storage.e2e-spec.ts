/**
 * RateLimitThrottlerStorage under the real @nestjs/throttler ThrottlerGuard, against a real limiter
 * on the real NATS: the limit holds, the throttler's own headers and 429 come out, a throttler name
 * maps to a quota, and a limit the quota does not share is warned about once (the limiter's wins).
 */
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { SkipThrottle, ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { RateLimitClient } from '@app/client';
import { RateLimitModule } from '@app/client/nest';
import { RateLimitThrottlerStorage } from '@app/client/throttler';
import {
  NATS_URL,
  hourlyQuota,
  startNestTestLimiter,
  type NestTestLimiter,
  NEST_HOOK_TIMEOUT_MS,
} from './support/nest-limiter';

jest.setTimeout(NEST_HOOK_TIMEOUT_MS);

const MINUTE = 60_000;

@Controller()
class ThrottledController {
  /** Under the `short` throttler only: its quota has the throttler's limit, 3. */
  @Get('short')
  @SkipThrottle({ wide: true, ghost: true })
  short(): { ok: true } {
    return { ok: true };
  }

  /** Under the `wide` throttler only: it says 10, its quota (`narrow`) allows 2. */
  @Get('wide')
  @SkipThrottle({ short: true, ghost: true })
  wide(): { ok: true } {
    return { ok: true };
  }

  /** Under the `ghost` throttler only: its quota does not exist on the limiter. */
  @Get('ghost')
  @SkipThrottle({ short: true, wide: true })
  ghost(): { ok: true } {
    return { ok: true };
  }
}

describe('RateLimitThrottlerStorage with ThrottlerGuard', () => {
  let limiter: NestTestLimiter;
  let app: INestApplication;
  let url: string;
  const warnings: string[] = [];

  beforeAll(async () => {
    limiter = await startNestTestLimiter([hourlyQuota('short', 3), hourlyQuota('narrow', 2)]);
    const moduleRef = await Test.createTestingModule({
      imports: [
        RateLimitModule.forRoot({ servers: NATS_URL, subjectPrefix: limiter.prefix }),
        ThrottlerModule.forRootAsync({
          inject: [RateLimitClient],
          useFactory: (client: RateLimitClient) => ({
            throttlers: [
              { name: 'short', ttl: MINUTE, limit: 3 },
              { name: 'wide', ttl: MINUTE, limit: 10 },
              { name: 'ghost', ttl: MINUTE, limit: 5 },
            ],
            storage: new RateLimitThrottlerStorage(client, {
              quotas: { wide: 'narrow', ghost: 'missing' },
              logger: { warn: (message: unknown) => void warnings.push(String(message)) },
            }),
          }),
        }),
      ],
      controllers: [ThrottledController],
      providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
    }).compile();
    app = moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(async () => {
    await app?.close();
    await limiter?.stop();
  });

  it('holds the limit with the throttler headers, then 429 with its Retry-After', async () => {
    for (let i = 1; i <= 3; i++) {
      const res = await fetch(`${url}/short`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit-short')).toBe('3');
      expect(res.headers.get('x-ratelimit-remaining-short')).toBe(String(3 - i));
      expect(Number(res.headers.get('x-ratelimit-reset-short'))).toBeGreaterThan(0);
    }
    const refused = await fetch(`${url}/short`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after-short'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ statusCode: 429 });
  });

  it("enforces the mapped quota's limit over the throttler's, and warns once", async () => {
    expect((await fetch(`${url}/wide`)).status).toBe(200);
    expect((await fetch(`${url}/wide`)).status).toBe(200);
    expect((await fetch(`${url}/wide`)).status).toBe(429);
    expect((await fetch(`${url}/wide`)).status).toBe(429);
    const mismatch = warnings.filter((w) => w.includes('"wide"'));
    expect(mismatch).toHaveLength(1);
    expect(mismatch[0]).toContain('"narrow"');
    expect(warnings.some((w) => w.includes('"short"'))).toBe(false);
  });

  it('refuses the calls of a throttler whose quota the limiter lacks, and says why once', async () => {
    expect((await fetch(`${url}/ghost`)).status).toBe(429);
    expect((await fetch(`${url}/ghost`)).status).toBe(429);
    const ghost = warnings.filter((w) => w.includes('"ghost"'));
    expect(ghost).toHaveLength(1);
    expect(ghost[0]).toContain('"missing", which the limiter does not have');
  });
});
