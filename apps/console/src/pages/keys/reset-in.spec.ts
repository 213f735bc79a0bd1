import { resetIn } from './reset-in';

describe('resetIn', () => {
  it('says now for a window that has reset (or a value that is not a time)', () => {
    expect(resetIn(0)).toBe('now');
    expect(resetIn(-5)).toBe('now');
    expect(resetIn(Number.NaN)).toBe('now');
  });

  it('gives milliseconds under a second and rounds seconds up', () => {
    expect(resetIn(250)).toBe('250ms');
    expect(resetIn(1_001)).toBe('2s');
    expect(resetIn(59_000)).toBe('59s');
  });

  it('gives minutes and seconds, hours and minutes, days and hours', () => {
    expect(resetIn(60_000)).toBe('1m 00s');
    expect(resetIn(245_000)).toBe('4m 05s');
    expect(resetIn(3_600_000)).toBe('1h 00m');
    expect(resetIn(12_000_000)).toBe('3h 20m');
    expect(resetIn(86_400_000 * 2 + 3_600_000 * 4)).toBe('2d 4h');
  });
});
