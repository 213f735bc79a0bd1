import { OncePerOutage } from './once-per-outage';

describe('OncePerOutage', () => {
  it('says yes once per reason until the connection is up again, alternating reasons included', () => {
    const once = new OncePerOutage();
    const seen = ['refused', 'timed out', 'refused', 'timed out', 'refused'].map((r) =>
      once.firstTime(r),
    );
    expect(seen).toEqual([true, true, false, false, false]);
    once.up();
    expect(once.firstTime('refused')).toBe(true);
  });

  it('holds at most maxReasons reasons in an outage', () => {
    const once = new OncePerOutage(3);
    const seen = Array.from({ length: 10 }, (_, i) => once.firstTime(`reason ${i}`));
    expect(seen.filter(Boolean)).toHaveLength(3);
  });
});
