import { compileQuota, MAX_LOG_SIZE } from '../quota/compile';
import type { LimitSpec } from '../types';
import { LimitProbe } from './harness.test-util';
import { expected, runOnEngine, SLIDING_CASES } from './sliding-cases.test-util';

const T0 = 1_700_000_000_000; // a multiple of 1000

describe('sliding_window', () => {
  // The table the cluster scripts run too (test/sliding-window-lua.e2e-spec.ts).
  it.each(SLIDING_CASES)('$name', (c) => {
    expect(runOnEngine(c)).toEqual(expected(c));
  });

  it('is idle once its newest admission slid out (sub-buckets: with its bucket)', () => {
    const buckets = new LimitProbe({ limit: 500, windowMs: 1000, algorithm: 'sliding_window' });
    buckets.take(T0 + 150);
    buckets.take(T0 + 420);
    expect(buckets.idleAt()).toBe(T0 + 1500);
    expect(buckets.resetMs(T0 + 420)).toBe(1080);
    const log = new LimitProbe({ limit: 5, windowMs: 1000, algorithm: 'sliding_window' });
    log.take(T0 + 150);
    log.take(T0 + 420);
    expect(log.idleAt()).toBe(T0 + 1420);
    expect(log.resetMs(T0 + 420)).toBe(1000);
  });

  it('a log of requests of 64 holds them all at one ms each, exactly', () => {
    const probe = new LimitProbe({ limit: 64, windowMs: 60_000, algorithm: 'sliding_window' });
    for (let i = 0; i < 64; i++) expect(probe.take(T0 + i * 10)).toBe(0);
    expect(probe.take(T0 + 640)).toBe(60_000 - 640);
    for (let i = 0; i < 64; i++) {
      expect(probe.take(T0 + 60_000 + i * 10 - 1)).toBe(1);
      expect(probe.take(T0 + 60_000 + i * 10)).toBe(0);
    }
  });
});

describe('sliding_window regimes (compile)', () => {
  const limit = (name: string, unit: string, size: number, windowMs = 60_000): LimitSpec => ({
    name,
    unit,
    limit: size,
    windowMs,
    algorithm: 'sliding_window',
  });
  const regimes = (...limits: LimitSpec[]) =>
    compileQuota({ name: 'q', limits }).limits.map((l) =>
      l.logSize === 0 ? 'buckets' : `${l.logUnits ? 'units' : 'pairs'} of ${l.logSize}`,
    );

  it.each<[string, LimitSpec[], string[]]>([
    ['requests up to 64: a log of requests', [limit('r', 'requests', 10)], ['units of 10']],
    ['requests of 64', [limit('r', 'requests', MAX_LOG_SIZE)], [`units of ${MAX_LOG_SIZE}`]],
    ['requests above 64: sub-buckets', [limit('r', 'requests', 65)], ['buckets']],
    ['tokens alone: sub-buckets', [limit('t', 'tokens', 1000)], ['buckets']],
    [
      'tokens under an rpm of 50: a log of 50 (instant, cost) pairs',
      [limit('rpm', 'requests', 50), limit('tpm', 'tokens', 40_000)],
      ['units of 50', 'pairs of 50'],
    ],
    [
      'tokens under an rpm above 64: sub-buckets for both',
      [limit('rpm', 'requests', 500), limit('tpm', 'tokens', 30_000)],
      ['buckets', 'buckets'],
    ],
    [
      'the smallest bound over a window at least as long sizes the log',
      [
        limit('rpm', 'requests', 40),
        limit('rph', 'requests', 20, 3_600_000),
        limit('tpm', 'tokens', 9000),
      ],
      ['units of 40', 'units of 20', 'pairs of 20'],
    ],
    [
      'a bound over a shorter window bounds nothing',
      [limit('rps', 'requests', 5, 1000), limit('tpm', 'tokens', 9000)],
      ['units of 5', 'buckets'],
    ],
    [
      'a fixed window does not bound a sliding one',
      [{ ...limit('rpm', 'requests', 5), algorithm: 'fixed_window' }, limit('t', 'tokens', 90)],
      ['buckets', 'buckets'],
    ],
    [
      'an explicit precision applies to sub-buckets only',
      [{ ...limit('r', 'requests', 10), precision: 120 }],
      ['units of 10'],
    ],
  ])('%s', (_name, limits, want) => {
    expect(regimes(...limits)).toEqual(want);
  });

  it('keeps a key of 10 requests a minute in 16 numbers, a log of 10 instants', () => {
    const q = compileQuota({ name: 'q', limits: [limit('rpm', 'requests', 10)] });
    expect(q.limits[0]!.impl.slots(q.limits[0]!)).toBe(16);
  });
});
