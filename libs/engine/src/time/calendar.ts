/**
 * Calendar windows: whole days that start at local midnight in an IANA time zone, so a
 * "requests per day" quota resets when the provider's day does (23 or 25 hours across DST).
 */
const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock of `instant` in `timeZone`, read as if it were UTC. */
function wallAsUtc(instant: number, timeZone: string): number {
  let y = 0,
    mo = 0,
    d = 0,
    h = 0,
    mi = 0,
    s = 0;
  for (const part of formatter(timeZone).formatToParts(instant)) {
    const v = Number(part.value);
    switch (part.type) {
      case 'year':
        y = v;
        break;
      case 'month':
        mo = v;
        break;
      case 'day':
        d = v;
        break;
      case 'hour':
        h = v;
        break;
      case 'minute':
        mi = v;
        break;
      case 'second':
        s = v;
        break;
      default:
        break;
    }
  }
  const ms = ((instant % 1000) + 1000) % 1000;
  return Date.UTC(y, mo - 1, d, h, mi, s, ms);
}

/** The instant at which the local day numbered `day` (days since 1970-01-01, local) begins. */
function localMidnight(day: number, timeZone: string): number {
  const wall = day * DAY_MS;
  // Two passes settle the offset even when midnight falls next to a DST change.
  let instant = wall - (wallAsUtc(wall, timeZone) - wall);
  instant = wall - (wallAsUtc(instant, timeZone) - instant);
  return instant;
}

export interface CalendarWindow {
  start: number;
  end: number;
}

/** A cache of the current calendar window: recomputed only when `now` leaves it. */
export class CalendarWindows {
  private readonly current: CalendarWindow = { start: 0, end: 0 };

  constructor(
    private readonly days: number,
    private readonly timeZone: string,
  ) {}

  at(now: number): CalendarWindow {
    const c = this.current;
    if (now >= c.start && now < c.end) return c;
    const localDay = Math.floor(wallAsUtc(now, this.timeZone) / DAY_MS);
    const firstDay = localDay - (((localDay % this.days) + this.days) % this.days);
    c.start = localMidnight(firstDay, this.timeZone);
    c.end = localMidnight(firstDay + this.days, this.timeZone);
    return c;
  }
}
