import { formatInstant, isAfter, parseInstant } from './instant';

describe('go-ratelimit timestamps', () => {
  it.each<[string, number, boolean]>([
    ['2026-11-21T10:00:01Z', Date.parse('2026-11-21T10:00:01Z'), false],
    ['2026-11-21t10:00:01z', Date.parse('2026-11-21T10:00:01Z'), false],
    ['2026-11-21T10:00:01.5Z', Date.parse('2026-11-21T10:00:01.500Z'), false],
    ['2026-11-21T10:00:01.123Z', Date.parse('2026-11-21T10:00:01.123Z'), false],
    // Go writes nanoseconds: below the millisecond is kept as "strictly after".
    ['2026-11-21T10:00:01.123456789Z', Date.parse('2026-11-21T10:00:01.123Z'), true],
    ['2026-11-21T10:00:01.123000000Z', Date.parse('2026-11-21T10:00:01.123Z'), false],
    ['2026-11-21T11:00:01+01:00', Date.parse('2026-11-21T10:00:01Z'), false],
    ['2026-11-21T05:00:01-05:00', Date.parse('2026-11-21T10:00:01Z'), false],
    ['2026-11-21T11:30:01+0130', Date.parse('2026-11-21T10:00:01Z'), false],
    ['2026-11-21 10:00:01', Date.parse('2026-11-21T10:00:01Z'), false],
    ['2026-11-21 05:00:01.25 -5', Date.parse('2026-11-21T10:00:01.250Z'), false],
    ['2026-1-2T3:04:05Z', Date.parse('2026-01-02T03:04:05Z'), false],
    ['2026-11-21', Date.parse('2026-11-21T00:00:00Z'), false],
    ['2024-02-29T00:00:00Z', Date.parse('2024-02-29T00:00:00Z'), false],
    // Go's zero time.Time.
    ['0001-01-01T00:00:00Z', new Date('0001-01-01T00:00:00Z').getTime(), false],
  ])('%s', (text, ms, afterMs) => {
    expect(parseInstant(text)).toEqual({ ms, afterMs });
  });

  it.each([
    '2026-13-01T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '2026-11-21T10:60:00Z',
    '2026-11-21T10:00:60Z',
    '2026-11-21T10:00:01+24:00',
    '2026-11-21T10:00:01+01:60',
    '2026-11-21T10:00Z',
    '21/11/2026',
    'yesterday',
    '',
    '1763719201000',
  ])('refuses %j', (text) => {
    expect(parseInstant(text)).toBeUndefined();
  });

  it('takes Dates (YAML !!timestamp) and refuses other values', () => {
    expect(parseInstant(new Date(1_763_719_201_000))).toEqual({
      ms: 1_763_719_201_000,
      afterMs: false,
    });
    expect(parseInstant(new Date(Number.NaN))).toBeUndefined();
    expect(parseInstant(1_763_719_201_000)).toBeUndefined();
    expect(parseInstant(null)).toBeUndefined();
  });

  it('compares exactly, below the millisecond too', () => {
    expect(isAfter({ ms: 10, afterMs: false }, 10)).toBe(false);
    expect(isAfter({ ms: 10, afterMs: true }, 10)).toBe(true);
    expect(isAfter({ ms: 11, afterMs: false }, 10)).toBe(true);
    expect(isAfter({ ms: 9, afterMs: true }, 10)).toBe(false);
  });

  it('prints ISO 8601', () => {
    expect(formatInstant({ ms: Date.parse('2026-11-21T00:00:00Z'), afterMs: false })).toBe(
      '2026-11-21T00:00:00.000Z',
    );
  });
});
