/**
 * RateLimitModule and @RateLimit over HTTP, on Fastify and on Express, against a real limiter on
 * the real NATS: headers as the limiter's own HTTP API sets them, 429 with Retry-After, skips, a
 * global guard, bad keys, failure policies, forRootAsync and the shutdown of the connection.
 */
import { randomUUID } from 'node:crypto';
import {
  Controller,
  Get,
  Injectable,
  Module,
  type INestApplication,
  type Type,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { connect } from 'nats';
import {
  RateLimit,
  RateLimitConnection,
  RateLimitGuard,
  RateLimitKeys,
  RateLimitModule,
  SkipRateLimit,
  type RateLimitModuleOptions,
} from '@app/client/nest';
import {
  NATS_URL,
  hourlyQuota,
  startNestTestLimiter,
  type NestTestLimiter,
  NEST_HOOK_TIMEOUT_MS,
} from './support/nest-limiter';
import { uniquePrefix } from './support/limiter-process';

jest.setTimeout(NEST_HOOK_TIMEOUT_MS);

const LIMIT = 3;
const byApiKey = RateLimitKeys.header('x-api-key');

@Controller('limited')
class LimitedController {
  @Get()
  @RateLimit({ quota: 'guarded', key: byApiKey })
  get(): { ok: true } {
    return { ok: true };
  }

  @Get('unknown')
  @RateLimit({ quota: 'no-such-quota', key: byApiKey })
  unknown(): { ok: true } {
    return { ok: true };
  }

  @Get('heavy')
  @RateLimit({ quota: 'guarded', key: byApiKey, cost: () => 2 })
  heavy(): { ok: true } {
    return { ok: true };
  }
}

@Controller('whole')
@RateLimit({ quota: 'guarded', key: byApiKey })
class WholeController {
  @Get()
  get(): { ok: true } {
    return { ok: true };
  }

  @Get('free')
  @SkipRateLimit()
  free(): { ok: true } {
    return { ok: true };
  }
}

type Platform = 'fastify' | 'express';

async function startApp(
  platform: Platform,
  imports: unknown[],
  providers: unknown[] = [],
  controllers: Type[] = [LimitedController, WholeController],
): Promise<{ app: INestApplication; url: string }> {
  const moduleRef = await Test.createTestingModule({
    imports: imports as never[],
    controllers,
    providers: providers as never[],
  }).compile();
  const app = moduleRef.createNestApplication(
    platform === 'fastify' ? new FastifyAdapter() : new ExpressAdapter(),
    { logger: false },
  );
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

function get(url: string, apiKey?: string): Promise<Response> {
  return fetch(url, { headers: apiKey === undefined ? {} : { 'x-api-key': apiKey } });
}

describe.each<Platform>(['fastify', 'express'])('@RateLimit over HTTP (%s)', (platform) => {
  let limiter: NestTestLimiter;
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    limiter = await startNestTestLimiter([hourlyQuota('guarded', LIMIT)]);
    ({ app, url } = await startApp(platform, [
      RateLimitModule.forRoot({ servers: NATS_URL, subjectPrefix: limiter.prefix }),
    ]));
  });
  afterAll(async () => {
    await app?.close();
    await limiter?.stop();
  });

  it('admits up to the limit with the limiter headers, then answers 429 with Retry-After', async () => {
    const key = randomUUID();
    for (let i = 1; i <= LIMIT; i++) {
      const res = await get(`${url}/limited`, key);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe(String(LIMIT));
      expect(res.headers.get('ratelimit-remaining')).toBe(String(LIMIT - i));
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      expect(res.headers.get('retry-after')).toBeNull();
    }
    const refused = await get(`${url}/limited`, key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
    // Another key has its own count.
    expect((await get(`${url}/limited`, randomUUID())).status).toBe(200);
  });

  it('charges the cost a function gives', async () => {
    const key = randomUUID();
    const res = await get(`${url}/limited/heavy`, key);
    expect(res.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 2));
    expect((await get(`${url}/limited/heavy`, key)).status).toBe(429);
  });

  it('limits every handler of a decorated class, except the one marked @SkipRateLimit', async () => {
    const key = randomUUID();
    for (let i = 0; i < LIMIT; i++) expect((await get(`${url}/whole`, key)).status).toBe(200);
    expect((await get(`${url}/whole`, key)).status).toBe(429);
    for (let i = 0; i < LIMIT + 2; i++) {
      const free = await get(`${url}/whole/free`, key);
      expect(free.status).toBe(200);
      expect(free.headers.get('ratelimit-limit')).toBeNull();
    }
  });

  it('refuses a call without a key with 400 naming the key', async () => {
    const res = await get(`${url}/limited`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'INVALID_REQUEST', field: 'key' });
  });

  it('answers 500 naming UNKNOWN_QUOTA for a route whose quota the limiter lacks', async () => {
    const res = await get(`${url}/limited/unknown`, randomUUID());
    expect(res.status).toBe(500);
    // No limit decided it: no headers, as on the limiter's own HTTP API.
    expect(res.headers.get('ratelimit-limit')).toBeNull();
    expect(res.headers.get('retry-after')).toBeNull();
    expect(await res.json()).toMatchObject({ statusCode: 500, code: 'UNKNOWN_QUOTA' });
  });

  it('refuses a key the limiter cannot take with 400 naming the field, and stays up', async () => {
    const res = await get(`${url}/limited`, 'k'.repeat(300));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'INVALID_REQUEST', field: 'key' });
    expect((await get(`${url}/limited`, randomUUID())).status).toBe(200);
  });
});

@Controller('global')
class GlobalController {
  @Get()
  byDefault(): { ok: true } {
    return { ok: true };
  }

  @Get('own')
  @RateLimit({ quota: 'guarded', key: byApiKey })
  own(): { ok: true } {
    return { ok: true };
  }

  @Get('skipped')
  @SkipRateLimit()
  skipped(): { ok: true } {
    return { ok: true };
  }
}

describe.each<Platform>(['fastify', 'express'])('RateLimitGuard as APP_GUARD (%s)', (platform) => {
  let limiter: NestTestLimiter;
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    limiter = await startNestTestLimiter([hourlyQuota('guarded', LIMIT)]);
    ({ app, url } = await startApp(
      platform,
      [
        RateLimitModule.forRoot({
          servers: NATS_URL,
          subjectPrefix: limiter.prefix,
          quota: 'guarded',
          key: byApiKey,
        }),
      ],
      [{ provide: APP_GUARD, useClass: RateLimitGuard }],
      [GlobalController],
    ));
  });
  afterAll(async () => {
    await app?.close();
    await limiter?.stop();
  });

  it('limits a route without a decorator by the module defaults', async () => {
    const key = randomUUID();
    for (let i = 0; i < LIMIT; i++) expect((await get(`${url}/global`, key)).status).toBe(200);
    expect((await get(`${url}/global`, key)).status).toBe(429);
  });

  it('charges a route with its own @RateLimit once, not once per guard', async () => {
    const key = randomUUID();
    for (let i = 1; i <= LIMIT; i++) {
      const res = await get(`${url}/global/own`, key);
      expect(res.headers.get('ratelimit-remaining')).toBe(String(LIMIT - i));
    }
  });

  it('never limits a route marked @SkipRateLimit', async () => {
    const key = randomUUID();
    for (let i = 0; i < LIMIT + 2; i++) {
      expect((await get(`${url}/global/skipped`, key)).status).toBe(200);
    }
  });
});

describe.each<Platform>(['fastify', 'express'])(
  'failure policy when no limiter answers (%s)',
  (platform) => {
    const apps: INestApplication[] = [];
    afterAll(async () => {
      for (const app of apps) await app.close();
    });

    async function withPolicy(failurePolicy: RateLimitModuleOptions['failurePolicy']) {
      // A prefix no limiter listens on: NATS answers "no responders" at once.
      const started = await startApp(platform, [
        RateLimitModule.forRoot({
          servers: NATS_URL,
          subjectPrefix: uniquePrefix(),
          failurePolicy,
        }),
      ]);
      apps.push(started.app);
      return get(`${started.url}/limited`, randomUUID());
    }

    it('closed: 503 naming UNAVAILABLE, and no RateLimit headers', async () => {
      const res = await withPolicy('closed');
      expect(res.status).toBe(503);
      expect(res.headers.get('ratelimit-limit')).toBeNull();
      expect(res.headers.get('retry-after')).toBeNull();
      expect(await res.json()).toMatchObject({ statusCode: 503, code: 'UNAVAILABLE' });
    });

    it('open: the call passes, with no RateLimit headers', async () => {
      const res = await withPolicy('open');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    });

    it('throw: the guard answers 503 as closed does', async () => {
      const res = await withPolicy('throw');
      expect(res.status).toBe(503);
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    });
  },
);

/** A ConfigService-like provider: settings a factory reads. */
@Injectable()
class Settings {
  constructor(private readonly values: Record<string, string>) {}
  get(name: string): string {
    const value = this.values[name];
    if (value === undefined) throw new Error(`${name} is not set`);
    return value;
  }
}

describe('forRootAsync and shutdown', () => {
  let limiter: NestTestLimiter;

  beforeAll(async () => {
    limiter = await startNestTestLimiter([hourlyQuota('guarded', LIMIT)]);
  });
  afterAll(async () => {
    await limiter?.stop();
  });

  function settingsModule() {
    @Module({
      providers: [
        { provide: Settings, useValue: new Settings({ NATS_URL, PREFIX: limiter.prefix }) },
      ],
      exports: [Settings],
    })
    class SettingsModule {}
    return SettingsModule;
  }

  it('builds its options with a factory of injected settings, and drains the connection it opened on close', async () => {
    const { app, url } = await startApp('fastify', [
      RateLimitModule.forRootAsync({
        imports: [settingsModule()],
        inject: [Settings],
        useFactory: (settings: Settings) => ({
          servers: settings.get('NATS_URL'),
          subjectPrefix: settings.get('PREFIX'),
        }),
      }),
    ]);
    const { connection } = app.get(RateLimitConnection);
    try {
      const res = await get(`${url}/limited`, randomUUID());
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe(String(LIMIT));
      expect(connection.isClosed()).toBe(false);
    } finally {
      await app.close();
    }
    expect(connection.isClosed()).toBe(true);
  });

  it('leaves a connection the caller gave open on close', async () => {
    const nc = await connect({ servers: NATS_URL });
    try {
      const { app, url } = await startApp('express', [
        RateLimitModule.forRoot({ connection: nc, subjectPrefix: limiter.prefix }),
      ]);
      expect((await get(`${url}/limited`, randomUUID())).status).toBe(200);
      await app.close();
      expect(nc.isClosed()).toBe(false);
    } finally {
      await nc.close();
    }
  });
});
