import { LimitProbe, run, type Step } from './harness.test-util';

const T0 = 1_700_000_000_000; // a multiple of 1000: windows of 1 s start here

describe('fixed_window', () => {
  const cases: { name: string; limit: number; windowMs: number; steps: Step[] }[] = [
    {
      name: 'admits up to the limit, then refuses until the window ends',
      limit: 3,
      windowMs: 1000,
      steps: [
        [T0, 1, 0],
        [T0 + 1, 1, 0],
        [T0 + 2, 1, 0],
        [T0 + 3, 1, 997],
        [T0 + 999, 1, 1],
        [T0 + 1000, 1, 0],
      ],
    },
    {
      name: 'windows are aligned to multiples of windowMs, not to the first request',
      limit: 1,
      windowMs: 1000,
      steps: [
        [T0 + 900, 1, 0],
        [T0 + 950, 1, 50],
        [T0 + 1000, 1, 0],
      ],
    },
    {
      name: 'a cost of exactly the capacity is admitted in a fresh window only',
      limit: 5,
      windowMs: 1000,
      steps: [
        [T0, 5, 0],
        [T0 + 10, 1, 990],
        [T0 + 1000, 4, 0],
        [T0 + 1001, 2, 999],
        [T0 + 1001, 1, 0],
      ],
    },
    {
      name: 'a cost of 0 is always admitted, even when full',
      limit: 1,
      windowMs: 1000,
      steps: [
        [T0, 1, 0],
        [T0 + 1, 0, 0],
        [T0 + 2, 1, 998],
      ],
    },
  ];

  it.each(cases)('$name', ({ limit, windowMs, steps }) => {
    const probe = new LimitProbe({ limit, windowMs, algorithm: 'fixed_window' });
    expect(run(probe, steps)).toEqual(steps.map((s) => s[2]));
  });

  it('gives a released cost back in the window it was charged in only (GoCC)', () => {
    const probe = new LimitProbe({ limit: 2, windowMs: 1000, algorithm: 'fixed_window' });
    expect(probe.take(T0, 2)).toBe(0);
    probe.refund(T0 + 5, T0, 1);
    expect(probe.take(T0 + 6)).toBe(0);
    expect(probe.take(T0 + 7)).toBe(993);
    // charged in the previous window: giving it back now would admit more than 2 in this window
    expect(probe.take(T0 + 1000, 2)).toBe(0);
    probe.refund(T0 + 1001, T0 + 6, 1);
    expect(probe.available(T0 + 1001)).toBe(0);
  });

  it('reports when it resets and when its state stops holding information', () => {
    const probe = new LimitProbe({ limit: 2, windowMs: 1000, algorithm: 'fixed_window' });
    expect(probe.idleAt()).toBe(0);
    probe.take(T0 + 250);
    expect(probe.resetMs(T0 + 250)).toBe(750);
    expect(probe.idleAt()).toBe(T0 + 1000);
  });
});
