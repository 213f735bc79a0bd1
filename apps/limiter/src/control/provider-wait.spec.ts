import { composeQuotas, type LimiterConfig, type ProviderProfile } from '@app/contracts';
import { Engine, PendingAcquire, type Decision } from '@app/engine';

// Model quotas as the limiter composes them, on a virtual clock: a waiting acquire is admitted
// when the provider's minute frees its capacity, in FIFO order (go-ratelimit's WaitForCapacity).
const T0 = 1_800_000_000_000; // a whole minute
const MINUTE = 60_000;
const ACME: ProviderProfile = {
  name: 'acme',
  models: [{ model: 'm', maxRpm: 3, maxTpm: 1000, maxRpd: 0 }],
};
const config: LimiterConfig = { format: 'native', quotas: [], providers: ['acme'] };

function engineWith(queue = { maxSize: 2, maxWaitMs: MINUTE }): Engine {
  const quotas = composeQuotas(config, undefined, { scope: 'local', queue }, [ACME]);
  return new Engine(quotas);
}

function runUntil(engine: Engine, t: number): void {
  for (let at = engine.nextWakeAt(); at <= t; at = engine.nextWakeAt()) engine.advance(at);
  engine.advance(t);
}

function pending(r: Decision | PendingAcquire): PendingAcquire {
  if (!(r instanceof PendingAcquire)) throw new Error(`expected a waiter, got ${r.code}`);
  return r;
}

/** rpm 3 spent at T0, T0+10 s and T0+20 s. */
function spent(engine: Engine): void {
  for (const at of [T0, T0 + 10_000, T0 + 20_000]) {
    expect(engine.acquire({ key: 'm', cost: { requests: 1, tokens: 10 } }, at)).toMatchObject({
      allowed: true,
      quota: 'm',
    });
  }
}

describe('a provider model quota queues waiting acquires', () => {
  it('admits waiters in arrival order as each admission leaves the minute', () => {
    const engine = engineWith();
    spent(engine);
    const a = pending(engine.acquire({ key: 'm', requestId: 'a', wait: true }, T0 + 30_000));
    const b = pending(engine.acquire({ key: 'm', requestId: 'b', wait: true }, T0 + 31_000));
    expect(engine.acquire({ key: 'm', wait: true }, T0 + 32_000)).toMatchObject({
      code: 'QUEUE_FULL',
    });

    // An rpm of 3 is exact to the ms: each waiter is admitted the instant an admission is a
    // minute old, not a sub-bucket later.
    runUntil(engine, T0 + MINUTE - 1);
    expect(a.settled).toBeUndefined();
    runUntil(engine, T0 + MINUTE);
    expect(a.settled).toMatchObject({ allowed: true, requestId: 'a', waitedMs: 30_000 });
    runUntil(engine, T0 + 10_000 + MINUTE - 1);
    expect(b.settled).toBeUndefined();
    runUntil(engine, T0 + 10_000 + MINUTE);
    expect(b.settled).toMatchObject({ allowed: true, requestId: 'b', waitedMs: 39_000 });
  });

  it('times a waiter out at maxWaitMs when the minute does not free enough', () => {
    const engine = engineWith({ maxSize: 2, maxWaitMs: 1_000 });
    spent(engine);
    const w = pending(engine.acquire({ key: 'm', wait: true }, T0 + 30_000));
    runUntil(engine, T0 + 31_000);
    expect(w.settled).toMatchObject({ allowed: false, code: 'WAIT_TIMEOUT', waitedMs: 1_000 });
  });

  it('refuses at once without a queue (PROVIDER_QUEUE_SIZE=0)', () => {
    const quotas = composeQuotas(config, undefined, { scope: 'local', queue: undefined }, [ACME]);
    const engine = new Engine(quotas);
    spent(engine);
    expect(engine.acquire({ key: 'm', wait: true }, T0 + 30_000)).toMatchObject({
      allowed: false,
      code: 'RATE_LIMITED',
    });
  });
});
