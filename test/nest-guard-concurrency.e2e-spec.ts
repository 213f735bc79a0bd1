/**
 * @RateLimit on a concurrency quota over HTTP, on Fastify and on Express, against a real limiter on
 * the real NATS: the guard releases the call's lease when the response ends (answered, thrown, or
 * the client gone), exactly once, so a quota of concurrency 1 with a lease TTL far longer than the
 * tests works as a semaphore.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Controller, Get, Res, type INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { connect, type NatsConnection } from 'nats';
import { RateLimit, RateLimitConnection, RateLimitKeys, RateLimitModule } from '@app/client/nest';
import {
  NATS_URL,
  hourlyQuota,
  startNestTestLimiter,
  type NestTestLimiter,
  NEST_HOOK_TIMEOUT_MS,
} from './support/nest-limiter';

jest.setTimeout(NEST_HOOK_TIMEOUT_MS);

const QUOTA = 'one-at-a-time';
const byApiKey = RateLimitKeys.header('x-api-key');

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** What the slow handler signals, and what it waits for, for the call under way. */
let slow: { entered: Deferred; closed: Deferred; proceed: Deferred; ended: Deferred };

@Controller('one')
@RateLimit({ quota: QUOTA, key: byApiKey })
class OneAtATimeController {
  @Get()
  get(): { ok: true } {
    return { ok: true };
  }

  @Get('fails')
  fails(): never {
    throw new Error('the handler failed');
  }

  @Get('slow')
  async slow(@Res({ passthrough: true }) res: { raw?: ServerResponse }): Promise<{ ok: true }> {
    const call = slow;
    // Express hands the Node response itself, Fastify its reply with the Node response as `raw`.
    const raw = res.raw ?? (res as unknown as ServerResponse);
    // Registered after the guard's listener, so it runs after the guard's release was sent.
    raw.once('close', () => call.closed.resolve());
    call.entered.resolve();
    try {
      await call.proceed.promise;
      return { ok: true };
    } finally {
      call.ended.resolve();
    }
  }
}

type Platform = 'fastify' | 'express';

function get(url: string, key: string, signal?: AbortSignal): Promise<Response> {
  return fetch(url, { headers: { 'x-api-key': key }, ...(signal !== undefined && { signal }) });
}

describe.each<Platform>(['fastify', 'express'])(
  '@RateLimit on a concurrency quota over HTTP (%s)',
  (platform) => {
    let limiter: NestTestLimiter;
    let app: INestApplication;
    let url: string;
    let nc: NatsConnection;
    const released: string[] = [];

    beforeAll(async () => {
      limiter = await startNestTestLimiter([
        {
          ...hourlyQuota(QUOTA, 1_000),
          // A lease outlives every test by far: only a release frees it.
          concurrency: { max: 1, leaseTtlMs: 3_600_000 },
        },
      ]);
      nc = await connect({ servers: NATS_URL });
      // Not a queue group: sees every release the guard sends, beside the limiter serving it.
      nc.subscribe(`${limiter.prefix}.release`, {
        callback: (_error, msg) => {
          const body = msg.json<{ leaseId?: string }>();
          released.push(body.leaseId ?? '(none)');
        },
      });
      const moduleRef = await Test.createTestingModule({
        imports: [RateLimitModule.forRoot({ servers: NATS_URL, subjectPrefix: limiter.prefix })],
        controllers: [OneAtATimeController],
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
      await nc?.drain();
      await limiter?.stop();
    });

    /**
     * The releases the guard has sent so far: a marker published on the guard's own connection
     * after them reaches this subscriber after them (NATS keeps one publisher's order).
     */
    async function releasesSent(): Promise<string[]> {
      const subject = `marker.${randomUUID()}`;
      const marker = nc.subscribe(subject, { max: 1, callback: () => undefined });
      await nc.flush();
      app.get(RateLimitConnection).connection.publish(subject);
      await marker.closed;
      return released.splice(0);
    }

    beforeEach(async () => {
      await releasesSent();
      slow = { entered: deferred(), closed: deferred(), proceed: deferred(), ended: deferred() };
    });

    it('admits calls one after the other, each lease released exactly once', async () => {
      const key = randomUUID();
      for (let i = 0; i < 5; i++) {
        const res = await get(`${url}/one`, key);
        expect({ call: i, status: res.status }).toEqual({ call: i, status: 200 });
        await res.arrayBuffer();
      }
      const sent = await releasesSent();
      expect(sent).toHaveLength(5);
      expect(new Set(sent).size).toBe(5);
      expect(sent).not.toContain('(none)');
    });

    it('refuses a second call while the first is in its handler, with CONCURRENCY_LIMITED', async () => {
      const key = randomUUID();
      const first = get(`${url}/one/slow`, key);
      await slow.entered.promise;
      const second = await get(`${url}/one`, key);
      expect(second.status).toBe(429);
      expect(await second.json()).toMatchObject({ code: 'CONCURRENCY_LIMITED' });
      slow.proceed.resolve();
      expect((await first).status).toBe(200);
      expect((await get(`${url}/one`, key)).status).toBe(200);
      expect(await releasesSent()).toHaveLength(2);
    });

    it('releases the lease of a handler that throws', async () => {
      const key = randomUUID();
      const failed = await get(`${url}/one/fails`, key);
      expect(failed.status).toBe(500);
      await failed.arrayBuffer();
      expect((await get(`${url}/one`, key)).status).toBe(200);
      expect(await releasesSent()).toHaveLength(2);
    });

    it('releases the lease of a call whose client went away in the handler', async () => {
      const key = randomUUID();
      const abort = new AbortController();
      const aborted = get(`${url}/one/slow`, key, abort.signal).catch((error: unknown) => error);
      await slow.entered.promise;
      abort.abort();
      expect(await aborted).toMatchObject({ name: 'AbortError' });
      await slow.closed.promise;
      slow.proceed.resolve();
      await slow.ended.promise;
      expect((await get(`${url}/one`, key)).status).toBe(200);
      expect(await releasesSent()).toHaveLength(2);
    });
  },
);
