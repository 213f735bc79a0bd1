/**
 * @RateLimit on a GraphQL resolver (Nest's Mercurius driver on Fastify) against a real limiter on
 * the real NATS: admitted fields answer, a refused one is a GraphQL error with extensions
 * { code: 'RATE_LIMITED', retryAfterMs }, keyed by a header of the request that carried the query.
 */
import { randomUUID } from 'node:crypto';
import { GraphQLModule, Query, Resolver } from '@nestjs/graphql';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { RateLimit, RateLimitKeys, RateLimitModule, SkipRateLimit } from '@app/client/nest';
import {
  NATS_URL,
  hourlyQuota,
  startNestTestLimiter,
  type NestTestLimiter,
  NEST_HOOK_TIMEOUT_MS,
} from './support/nest-limiter';

jest.setTimeout(NEST_HOOK_TIMEOUT_MS);

const LIMIT = 2;

@Resolver()
class GreetingResolver {
  @Query(() => String)
  @RateLimit({ quota: 'graph', key: RateLimitKeys.header('x-api-key') })
  hello(): string {
    return 'hello';
  }

  @Query(() => String)
  @SkipRateLimit()
  free(): string {
    return 'free';
  }
}

interface GraphQlAnswer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

describe('@RateLimit in GraphQL (Mercurius)', () => {
  let limiter: NestTestLimiter;
  let app: NestFastifyApplication;
  let url: string;

  beforeAll(async () => {
    limiter = await startNestTestLimiter([hourlyQuota('graph', LIMIT)]);
    const moduleRef = await Test.createTestingModule({
      imports: [
        RateLimitModule.forRoot({ servers: NATS_URL, subjectPrefix: limiter.prefix }),
        GraphQLModule.forRoot<MercuriusDriverConfig>({
          driver: MercuriusDriver,
          autoSchemaFile: true,
          // Mercurius's query cache loads an ES module, which Jest's VM cannot import.
          cache: false,
        }),
      ],
      providers: [GreetingResolver],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), {
      logger: false,
    });
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/graphql`;
  });
  afterAll(async () => {
    await app?.close();
    await limiter?.stop();
  });

  async function query(
    apiKey: string,
    field: string,
  ): Promise<{ status: number; body: GraphQlAnswer; headers: Headers }> {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ query: `{ ${field} }` }),
    });
    return { status: res.status, body: (await res.json()) as GraphQlAnswer, headers: res.headers };
  }

  it('answers up to the limit, then refuses with extensions { code: RATE_LIMITED, retryAfterMs }', async () => {
    const key = randomUUID();
    for (let i = 1; i <= LIMIT; i++) {
      const answer = await query(key, 'hello');
      expect(answer.body).toEqual({ data: { hello: 'hello' } });
      expect(answer.headers.get('ratelimit-remaining')).toBe(String(LIMIT - i));
    }
    const refused = await query(key, 'hello');
    expect(refused.body.data ?? null).toBeNull();
    expect(refused.body.errors).toHaveLength(1);
    const extensions = refused.body.errors?.[0]?.extensions;
    expect(extensions).toMatchObject({ code: 'RATE_LIMITED', limiterCode: 'RATE_LIMITED' });
    expect(extensions?.['retryAfterMs']).toEqual(expect.any(Number));
    expect(extensions?.['retryAfterMs'] as number).toBeGreaterThan(0);
  });

  it('never limits a field marked @SkipRateLimit', async () => {
    const key = randomUUID();
    for (let i = 0; i < LIMIT + 2; i++) {
      expect((await query(key, 'free')).body).toEqual({ data: { free: 'free' } });
    }
  });
});
