import 'reflect-metadata';
import { VirtualClock } from '@app/engine';
import type { Msg } from 'nats';
import { LimiterService } from '../engine-host/limiter.service';
import { ReadinessService } from '../engine-host/readiness.service';
import { readLimiterSettings } from '../settings/limiter-settings';
import { NatsRequestsService } from './nats-requests.service';
import { NatsResponder } from './nats-responder';
import { ReplyGuard } from './reply-guard';
import { NatsTransport } from './nats-transport.service';

describe('NatsTransport.listen', () => {
  let limiter: LimiterService;
  let transport: NatsTransport;

  beforeEach(() => {
    const settings = readLimiterSettings({ NATS_URL: '' });
    limiter = new LimiterService(settings, new VirtualClock(0));
    const requests = new NatsRequestsService(limiter);
    transport = new NatsTransport(settings, new ReadinessService(), limiter, requests);
  });
  afterEach(() => limiter.onModuleDestroy());

  const listen = (): Promise<unknown> =>
    new Promise((resolve) => transport.listen((error?: unknown) => resolve(error)));

  it('refuses to start when an operation has no @MessagePattern handler', async () => {
    for (const op of ['acquire', 'batch', 'decide', 'release']) {
      transport.addHandler(op, () => Promise.resolve(undefined));
    }
    const error = await listen();

    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('no @MessagePattern for usage, stats');
  });

  it('starts when every operation has its handler', async () => {
    for (const op of ['acquire', 'batch', 'decide', 'release', 'usage', 'stats']) {
      transport.addHandler(op, () => Promise.resolve(undefined));
    }

    expect(await listen()).toBeUndefined();
  });
});

describe('NatsResponder at the shutdown deadline', () => {
  it('answers an owed reply with its cut, made only then', () => {
    const replies: Uint8Array[] = [];
    const msg = {
      reply: '_INBOX.r',
      respond: (d: Uint8Array) => replies.push(d) > 0,
    } as unknown as Msg;
    let made = 0;
    const responder = new NatsResponder(new ReplyGuard('ratelimit.v1', []));
    responder.deliver(msg, new Promise<Uint8Array>(() => undefined), () => {
      made++;
      return Buffer.from('cut');
    });

    expect([made, responder.owedCount]).toEqual([0, 1]);
    responder.answerOwed();
    expect(replies.map((r) => Buffer.from(r).toString())).toEqual(['cut']);
    expect([made, responder.owedCount]).toEqual([1, 0]);
  });
});
