import { clockTick } from './time-axis';

describe('clockTick', () => {
  const at = new Date(2024, 4, 1, 9, 5, 7).getTime() / 1000;

  it('gives hours and minutes when ticks are a minute or more apart', () => {
    expect(clockTick(at, 60)).toBe('09:05');
    expect(clockTick(at, 300)).toBe('09:05');
  });

  it('adds the seconds when ticks are closer', () => {
    expect(clockTick(at, 10)).toBe('09:05:07');
  });
});
