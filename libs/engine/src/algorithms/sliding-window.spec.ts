import { LimitProbe, run, type Step } from './harness.test-util';

const T0 = 1_700_000_000_000; // a multiple of 1000

describe('sliding_window', () => {
  // windowMs 1000, precision 10: sub-buckets of 100 ms; a decision counts the last 11 sub-buckets.
  const cases: { name: string; limit: number; precision?: number; steps: Step[] }[] = [
    {
      name: 'refuses until the sub-bucket holding the oldest admissions slides out',
      limit: 3,
      steps: [
        [T0 + 50, 2, 0],
        [T0 + 520, 1, 0],
        [T0 + 530, 1, 570],
        [T0 + 1099, 1, 1],
        [T0 + 1100, 1, 0],
        [T0 + 1100, 2, 500],
        [T0 + 1600, 2, 0],
      ],
    },
    {
      name: 'never admits more than the limit in any interval of windowMs (no boundary burst)',
      limit: 4,
      steps: [
        [T0 + 990, 4, 0],
        [T0 + 1000, 1, 1000],
        [T0 + 1500, 1, 500],
        [T0 + 1989, 1, 11],
        [T0 + 2100, 4, 0],
      ],
    },
    {
      name: 'precision 1 behaves like two whole windows',
      limit: 2,
      precision: 1,
      steps: [
        [T0 + 10, 2, 0],
        [T0 + 1500, 1, 500],
        [T0 + 2000, 2, 0],
      ],
    },
    {
      name: 'a cost of exactly the limit and of 0',
      limit: 5,
      steps: [
        [T0, 5, 0],
        [T0 + 1, 0, 0],
        [T0 + 2, 5, 1098],
        [T0 + 1100, 5, 0],
      ],
    },
    {
      name: 'a clock moving backwards frees nothing',
      limit: 2,
      steps: [
        [T0 + 5000, 2, 0],
        [T0, 1, 6100],
        [T0 + 6099, 1, 1],
        [T0 + 6100, 1, 0],
      ],
    },
  ];

  it.each(cases)('$name', ({ limit, precision, steps }) => {
    const probe = new LimitProbe({
      limit,
      windowMs: 1000,
      algorithm: 'sliding_window',
      ...(precision ? { precision } : {}),
    });
    expect(run(probe, steps)).toEqual(steps.map((s) => s[2]));
  });

  it('gives a refund back to the sub-bucket it was charged in, while it still counts', () => {
    const probe = new LimitProbe({ limit: 2, windowMs: 1000, algorithm: 'sliding_window' });
    probe.take(T0, 2);
    probe.refund(T0 + 300, T0, 1);
    expect(probe.available(T0 + 300)).toBe(1);
    probe.take(T0 + 300);
    probe.refund(T0 + 1200, T0, 1); // slid out already: nothing to give back
    expect(probe.available(T0 + 1200)).toBe(1);
  });

  it('is idle once its newest admission slid out', () => {
    const probe = new LimitProbe({ limit: 5, windowMs: 1000, algorithm: 'sliding_window' });
    probe.take(T0 + 150);
    probe.take(T0 + 420);
    expect(probe.idleAt()).toBe(T0 + 1500);
    expect(probe.resetMs(T0 + 420)).toBe(1080);
  });
});
