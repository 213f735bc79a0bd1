import { LimitProbe, run, type Step } from './harness.test-util';

const T0 = 1_700_000_000_000;

describe('token_bucket', () => {
  const cases: { name: string; limit: number; windowMs: number; burst?: number; steps: Step[] }[] =
    [
      {
        name: 'starts full and refills continuously (10 per second: one per 100 ms)',
        limit: 10,
        windowMs: 1000,
        steps: [
          [T0, 10, 0],
          [T0, 1, 100],
          [T0 + 99, 1, 1],
          [T0 + 100, 1, 0],
          [T0 + 100, 1, 100],
        ],
      },
      {
        name: 'burst caps the bucket; rate stays limit per window',
        limit: 10,
        windowMs: 1000,
        burst: 3,
        steps: [
          [T0, 3, 0],
          [T0 + 10_000, 4, 100],
          [T0 + 10_000, 3, 0],
          [T0 + 10_200, 2, 0],
          [T0 + 10_200, 1, 100],
        ],
      },
      {
        name: 'refill that is not a whole number of ms per token rounds the wait up, exactly',
        limit: 3,
        windowMs: 1000,
        steps: [
          [T0, 3, 0],
          [T0, 1, 334],
          [T0 + 333, 1, 1],
          [T0 + 334, 1, 0],
          [T0 + 334, 1, 333],
          [T0 + 667, 1, 0],
        ],
      },
      {
        name: 'cost of exactly the burst waits for a full bucket',
        limit: 4,
        windowMs: 1000,
        steps: [
          [T0, 1, 0],
          [T0, 4, 250],
          [T0 + 250, 4, 0],
        ],
      },
      {
        name: 'cost 0 is admitted from an empty bucket',
        limit: 1,
        windowMs: 1000,
        steps: [
          [T0, 1, 0],
          [T0, 0, 0],
        ],
      },
    ];

  it.each(cases)('$name', ({ limit, windowMs, burst, steps }) => {
    const probe = new LimitProbe({
      limit,
      windowMs,
      algorithm: 'token_bucket',
      ...(burst ? { burst } : {}),
    });
    expect(run(probe, steps)).toEqual(steps.map((s) => s[2]));
  });

  it('is idle once full again, and a refund never overfills', () => {
    const probe = new LimitProbe({ limit: 10, windowMs: 1000, algorithm: 'token_bucket' });
    probe.take(T0, 5);
    expect(probe.idleAt()).toBe(T0 + 500);
    expect(probe.resetMs(T0 + 100)).toBe(400);
    probe.refund(T0 + 100, T0, 5);
    expect(probe.available(T0 + 100)).toBe(10);
    expect(probe.idleAt()).toBe(0);
  });
});
