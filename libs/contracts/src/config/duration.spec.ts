import { formatDuration, parseDuration } from './duration';

describe('durations', () => {
  it.each<[string, number]>([
    ['250ms', 250],
    ['1s', 1000],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['7d', 604_800_000],
    ['1h30m', 5_400_000],
    ['1m30s', 90_000],
    [' 2s ', 2000],
    ['1ms', 1],
  ])('%j is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    '',
    '0s',
    '0ms',
    '1',
    '1.5s',
    '-1s',
    '1 s',
    '1sec',
    '1w',
    'ms',
    '1S',
    '1s 2m',
    '99999999999999d',
  ])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it.each<[number, string]>([
    [86_400_000, '1d'],
    [3_600_000, '1h'],
    [60_000, '1m'],
    [1000, '1s'],
    [1500, '1500ms'],
    [90_000, '90s'],
    [250, '250ms'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });
});
