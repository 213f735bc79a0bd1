import { measuredFrom, ratesBetween, type CounterReading } from './rates';

const reading = (over: Partial<CounterReading>): CounterReading => ({
  atMs: 10_000,
  replicas: 2,
  approved: 100,
  denied: 10,
  ...over,
});

describe('ratesBetween', () => {
  it('divides the counters’ growth by the seconds between the readings', () => {
    const rates = ratesBetween(reading({}), reading({ atMs: 12_000, approved: 300, denied: 15 }));
    expect(rates).toEqual({ admitted: 100, refused: 2.5 });
  });

  it('gives zero, not unknown, when nothing happened', () => {
    expect(ratesBetween(reading({}), reading({ atMs: 11_000 }))).toEqual({
      admitted: 0,
      refused: 0,
    });
  });

  it('is unknown without an earlier reading', () => {
    expect(ratesBetween(undefined, reading({}))).toEqual({ admitted: null, refused: null });
  });

  it('is unknown, never negative, when a counter went down (a replica restarted)', () => {
    const before = reading({ approved: 500, denied: 50 });
    expect(ratesBetween(before, reading({ atMs: 11_000, approved: 20, denied: 60 }))).toEqual({
      admitted: null,
      refused: null,
    });
    expect(ratesBetween(before, reading({ atMs: 11_000, approved: 600, denied: 0 }))).toEqual({
      admitted: null,
      refused: null,
    });
  });

  it('is unknown when the replicas reporting changed, since the sum then moves without traffic', () => {
    const rates = ratesBetween(
      reading({ replicas: 1 }),
      reading({ atMs: 11_000, replicas: 2, approved: 5_000 }),
    );
    expect(rates).toEqual({ admitted: null, refused: null });
  });

  it('is unknown over less than the limiters’ 500 ms reporting period', () => {
    expect(ratesBetween(reading({}), reading({ atMs: 10_350, approved: 150 }))).toEqual({
      admitted: null,
      refused: null,
    });
    expect(ratesBetween(reading({}), reading({ atMs: 10_500, approved: 150 })).admitted).toBe(100);
  });

  it('keeps the earlier reading as the base when the next came too soon to measure from', () => {
    const base = reading({});
    const soon = reading({ atMs: 10_350 });
    const later = reading({ atMs: 11_000 });
    expect(measuredFrom(undefined, soon)).toBe(soon);
    expect(measuredFrom(base, soon)).toBe(base);
    expect(measuredFrom(base, later)).toBe(later);
  });

  it('is unknown when the readings are not in time order', () => {
    expect(ratesBetween(reading({ atMs: 11_000 }), reading({ atMs: 11_000 }))).toEqual({
      admitted: null,
      refused: null,
    });
    expect(ratesBetween(reading({ atMs: 12_000 }), reading({ atMs: 11_000 }))).toEqual({
      admitted: null,
      refused: null,
    });
  });
});
