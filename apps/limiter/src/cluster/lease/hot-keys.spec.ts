import { HOT_PERIOD_MS, HotKeys } from './hot-keys';

const T0 = 10_000;

/** Touches `hash` n times at `at`; the last answer. */
const touches = (hot: HotKeys, hash: number, n: number, at: number): boolean => {
  let last = false;
  for (let i = 0; i < n; i++) last = hot.touch(hash, at);
  return last;
};

describe('HotKeys', () => {
  // threshold = ceil(rate x 250 ms), at least 1: decisions within one period before the key is hot.
  it.each([
    [50, 13],
    [40, 10],
    [4, 1],
    [1, 1],
    [0.5, 1],
    [8, 2],
    [400, 100],
    [1e6, 250_000],
  ])('rate %p/s: hot from decision %p of a period', (rate, threshold) => {
    const hot = new HotKeys(rate, T0);
    if (threshold > 1) expect(touches(hot, 7, threshold - 1, T0)).toBe(false);
    expect(hot.touch(7, T0)).toBe(true);
    expect(hot.touch(7, T0)).toBe(true);
    // Another key's count is its own.
    expect(hot.touch(8, T0)).toBe(threshold === 1);
  });

  it.each([0, -1])('rate %p: never hot', (rate) => {
    const hot = new HotKeys(rate, T0);
    expect(touches(hot, 7, 100_000, T0)).toBe(false);
    expect(hot.touch(7, T0 + 10 * HOT_PERIOD_MS)).toBe(false);
  });

  // rate 40/s: threshold 10. `before` decisions at T0, then one at T0 + dt: counts halve once per
  // whole period past, so hot iff (before >> periods) + 1 >= 10.
  it.each([
    [9, 0, true],
    [9, 249, true],
    [9, 250, false], // 4 + 1
    [19, 250, true], // 9 + 1
    [19, 499, true],
    [19, 500, false], // 4 + 1
    [39, 500, true], // 9 + 1
    [39, 749, true],
    [39, 750, false], // 4 + 1
    [100_000, 40 * HOT_PERIOD_MS, false], // shifted by at most 31: 0
  ])('%p decisions at T0, one at T0+%p: hot %p', (before, dt, expected) => {
    const hot = new HotKeys(40, T0);
    touches(hot, 7, before, T0);
    expect(hot.touch(7, T0 + dt)).toBe(expected);
  });

  it('periods are counted from the last halving, not from the decision that halved', () => {
    const hot = new HotKeys(40, T0);
    touches(hot, 7, 19, T0);
    expect(hot.touch(7, T0 + 300)).toBe(true); // halved at T0+250: 9 + 1
    // The next halving is due at T0+500 (not T0+550): 10 >> 1 = 5, + 1.
    expect(hot.touch(7, T0 + 500)).toBe(false);
  });

  it('a hash shares its slot with hashes equal modulo 2^16 (a cold key looks hot: it leases)', () => {
    const hot = new HotKeys(40, T0);
    touches(hot, 7, 9, T0);
    expect(hot.touch(7 + 65_536, T0)).toBe(true);
    expect(hot.touch(8, T0)).toBe(false);
  });
});
