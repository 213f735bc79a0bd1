/**
 * @RateLimit on a Nest microservice handler (NATS transport) against a real limiter on the real
 * NATS: a refused message ends in an RpcException carrying the limiter's reply.
 */
import { randomUUID } from 'node:crypto';
import { Controller, type ExecutionContext, type INestMicroservice } from '@nestjs/common';
import {
  ClientProxyFactory,
  MessagePattern,
  Payload,
  Transport,
  type ClientProxy,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { firstValueFrom } from 'rxjs';
import { RateLimit, RateLimitModule } from '@app/client/nest';
import {
  NATS_URL,
  hourlyQuota,
  startNestTestLimiter,
  type NestTestLimiter,
  NEST_HOOK_TIMEOUT_MS,
} from './support/nest-limiter';

jest.setTimeout(NEST_HOOK_TIMEOUT_MS);

const LIMIT = 2;
/** This file's own pattern, so that parallel runs never share a handler. */
const GREET = `nest-rpc-test.${randomUUID()}.greet`;

interface Greeting {
  readonly user: string;
}

const byUser = (context: ExecutionContext): string =>
  context.switchToRpc().getData<Greeting>().user;

@Controller()
class GreetingHandler {
  @MessagePattern(GREET)
  @RateLimit({ quota: 'rpc', key: byUser })
  greet(@Payload() greeting: Greeting): string {
    return `hello ${greeting.user}`;
  }
}

describe('@RateLimit on a microservice handler (NATS transport)', () => {
  let limiter: NestTestLimiter;
  let service: INestMicroservice;
  let caller: ClientProxy;

  beforeAll(async () => {
    limiter = await startNestTestLimiter([hourlyQuota('rpc', LIMIT)]);
    const moduleRef = await Test.createTestingModule({
      imports: [RateLimitModule.forRoot({ servers: NATS_URL, subjectPrefix: limiter.prefix })],
      controllers: [GreetingHandler],
    }).compile();
    service = moduleRef.createNestMicroservice({
      transport: Transport.NATS,
      options: { servers: [NATS_URL] },
      logger: false,
    });
    await service.listen();
    caller = ClientProxyFactory.create({
      transport: Transport.NATS,
      options: { servers: [NATS_URL] },
    });
    await caller.connect();
  });
  afterAll(async () => {
    await caller?.close();
    await service?.close();
    await limiter?.stop();
  });

  it('answers up to the limit, then fails with the limiter reply', async () => {
    const user = randomUUID();
    for (let i = 0; i < LIMIT; i++) {
      expect(await firstValueFrom(caller.send(GREET, { user }))).toBe(`hello ${user}`);
    }
    const refused = firstValueFrom(caller.send(GREET, { user }));
    await expect(refused).rejects.toMatchObject({
      allowed: false,
      code: 'RATE_LIMITED',
      key: user,
      quota: 'rpc',
      limit: LIMIT,
      remaining: 0,
    });
    await refused.catch((reply: { retryAfterMs: number }) =>
      expect(reply.retryAfterMs).toBeGreaterThan(0),
    );
    // Another user has a count of its own.
    expect(await firstValueFrom(caller.send(GREET, { user: randomUUID() }))).toEqual(
      expect.stringMatching(/^hello /),
    );
  });
});
