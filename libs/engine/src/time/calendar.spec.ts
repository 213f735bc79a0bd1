import { CalendarWindows, isValidTimeZone } from './calendar';
import { LimitProbe } from '../algorithms/harness.test-util';

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('calendar windows', () => {
  const cases: {
    name: string;
    tz: string;
    days: number;
    at: string;
    start: string;
    end: string;
  }[] = [
    {
      name: 'a Pacific day in winter (UTC-8)',
      tz: 'America/Los_Angeles',
      days: 1,
      at: '2026-01-15T20:00:00Z',
      start: '2026-01-15T08:00:00Z',
      end: '2026-01-16T08:00:00Z',
    },
    {
      name: 'the spring-forward day is 23 hours long',
      tz: 'America/Los_Angeles',
      days: 1,
      at: '2026-03-08T12:00:00Z',
      start: '2026-03-08T08:00:00Z',
      end: '2026-03-09T07:00:00Z',
    },
    {
      name: 'the fall-back day is 25 hours long',
      tz: 'America/Los_Angeles',
      days: 1,
      at: '2026-11-01T12:00:00Z',
      start: '2026-11-01T07:00:00Z',
      end: '2026-11-02T08:00:00Z',
    },
    {
      name: 'UTC days',
      tz: 'UTC',
      days: 1,
      at: '2026-11-21T23:59:59.999Z',
      start: '2026-11-21T00:00:00Z',
      end: '2026-11-22T00:00:00Z',
    },
    {
      name: 'a zone east of UTC (UTC+5:30)',
      tz: 'Asia/Kolkata',
      days: 1,
      at: '2026-06-01T18:29:00Z',
      start: '2026-05-31T18:30:00Z',
      end: '2026-06-01T18:30:00Z',
    },
    {
      name: 'the instant of local midnight starts the new day',
      tz: 'Europe/Berlin',
      days: 1,
      at: '2026-07-01T22:00:00Z',
      start: '2026-07-01T22:00:00Z',
      end: '2026-07-02T22:00:00Z',
    },
    {
      name: 'windows of 7 days are aligned to local day numbers',
      tz: 'UTC',
      days: 7,
      at: '2026-11-21T12:00:00Z',
      start: '2026-11-19T00:00:00Z',
      end: '2026-11-26T00:00:00Z',
    },
  ];

  it.each(cases)('$name', ({ tz, days, at, start, end }) => {
    const w = new CalendarWindows(days, tz).at(Date.parse(at));
    expect(new Date(w.start).toISOString()).toBe(new Date(start).toISOString());
    expect(new Date(w.end).toISOString()).toBe(new Date(end).toISOString());
  });

  it('validates zone names', () => {
    expect(isValidTimeZone('America/Los_Angeles')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false);
  });

  it('a requests-per-day limit resets at Pacific midnight across the DST change', () => {
    const probe = new LimitProbe({
      limit: 2,
      windowMs: DAY,
      algorithm: 'fixed_window',
      align: 'calendar',
      timezone: 'America/Los_Angeles',
    });
    const midnight = Date.parse('2026-03-08T08:00:00Z'); // local midnight, the 23-hour day
    expect(probe.take(midnight + HOUR, 2)).toBe(0);
    expect(probe.take(midnight + 2 * HOUR)).toBe(21 * HOUR);
    expect(probe.take(midnight + 23 * HOUR - 1)).toBe(1);
    expect(probe.take(midnight + 23 * HOUR)).toBe(0);
  });
});
