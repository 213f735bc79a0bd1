import { natsSubjects } from '@app/contracts';
import { VirtualClock } from '@app/engine';
import { headers as natsHeaders, type Msg, type MsgHdrs } from 'nats';
import { LimiterService } from '../engine-host/limiter.service';
import { readLimiterSettings } from '../settings/limiter-settings';
import { natsHandlers } from './nats-handlers';
import { NatsRequestsService } from './nats-requests.service';
import { NatsResponder } from './nats-responder';
import { ReplyGuard } from './reply-guard';
import type { AcquireTracer } from '../tracing/acquire-tracer';
import type { Tracing } from '../tracing/tracing.service';

/**
 * Headers are decoded by nats.js when `msg.headers` is first read: the hot path must not read them
 * for a request it serves, only for a refusal it logs (its correlation id).
 */
describe('NATS headers, read only for a refusal', () => {
  let limiter: LimiterService;
  let handlers: ReturnType<typeof natsHandlers>;

  beforeEach(() => {
    limiter = new LimiterService(
      readLimiterSettings({ NATS_URL: '', MAX_REQUESTS: '5' }),
      new VirtualClock(0),
    );
    handlers = natsHandlers(natsSubjects('t'), new NatsRequestsService(limiter));
  });
  afterEach(() => limiter.onModuleDestroy());

  /** A message whose headers getter counts its reads; its replies are collected. */
  function message(body: string): { msg: Msg; reads: () => number; replies: Uint8Array[] } {
    let reads = 0;
    const replies: Uint8Array[] = [];
    const hdrs: MsgHdrs = natsHeaders();
    hdrs.set('X-Correlation-ID', 'c-1');
    const msg = {
      subject: 't.acquire',
      sid: 1,
      reply: '_INBOX.r',
      data: Buffer.from(body),
      get headers() {
        reads++;
        return hdrs;
      },
      respond: (data?: Uint8Array) => replies.push(data!) > 0,
    } as unknown as Msg;
    return { msg, reads: () => reads, replies };
  }

  const serve = (msg: Msg): void => {
    const acquire = handlers.find((h) => h.operation === 'acquire')!;
    new NatsResponder(new ReplyGuard('ratelimit.v1', [])).callback(
      acquire.handle,
      acquire.shuttingDown,
    )(null, msg);
  };

  it('serves an admitted and a rate-limited acquire without reading them', () => {
    const served = [0, 1, 2, 3, 4, 5].map(() => message('{"key":"k"}'));
    served.forEach(({ msg }) => serve(msg));

    const codes = served.map(
      ({ replies }) => (JSON.parse(Buffer.from(replies[0]!).toString()) as { code: string }).code,
    );
    expect(codes).toEqual(['OK', 'OK', 'OK', 'OK', 'OK', 'RATE_LIMITED']);
    expect(served.map(({ reads }) => reads())).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('reads them, for the traceparent, only when acquires are traced', () => {
    const parents: (string | undefined)[] = [];
    const tracer: AcquireTracer = {
      traced: (traceparent, _transport, _input, acquire) => {
        parents.push(traceparent);
        return acquire();
      },
      shutdown: () => Promise.resolve(),
    };
    handlers = natsHandlers(
      natsSubjects('t'),
      new NatsRequestsService(limiter, { acquires: tracer } as Tracing),
    );
    const traced = message('{"key":"k"}');
    serve(traced.msg);

    expect(traced.reads()).toBeGreaterThan(0);
    expect(parents).toEqual([undefined]);
    expect(JSON.parse(Buffer.from(traced.replies[0]!).toString())).toMatchObject({ code: 'OK' });
  });

  it('reads them for a refusal, which is logged with the correlation id', () => {
    const refused = message('{"key":5}');
    serve(refused.msg);

    expect(JSON.parse(Buffer.from(refused.replies[0]!).toString())).toMatchObject({
      code: 'INVALID_REQUEST',
    });
    expect(refused.reads()).toBeGreaterThan(0);
  });
});
