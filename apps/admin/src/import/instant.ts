/**
 * Points in time of go-ratelimit's state: Go's yaml.v3 writes `time.Time` as RFC 3339 with up to
 * nine fraction digits (`2026-11-21T10:00:01.123456789+01:00`), and reads YAML 1.1 timestamps
 * (`2026-11-21 10:00:01`, `2026-11-21`). The `yaml` package (YAML 1.2) leaves them strings, except
 * when tagged `!!timestamp` or under `%YAML 1.1`, where they arrive as a Date.
 */

/**
 * An instant to the millisecond, and whether it lies strictly after that millisecond (a fraction
 * below 1 ms), so window edges compare exactly: 59.9999 s ago is inside a minute, 60 s is not.
 */
export interface Instant {
  readonly ms: number;
  readonly afterMs: boolean;
}

export const TIMESTAMP_RULE =
  'must be a timestamp such as 2026-11-21T10:00:01Z (RFC 3339, or a YAML timestamp)';

const TIMESTAMP =
  /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:[ \t]*(Z|z|[+-][0-9]{1,2}(?::?[0-9]{2})?))?)?$/;
const ZONE = /^([+-])([0-9]{1,2})(?::?([0-9]{2}))?$/;
const MS_PER_DAY = 86_400_000;
const MS_PER_HOUR = 3_600_000;
const MS_PER_MINUTE = 60_000;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** Milliseconds east of UTC, or undefined when the zone is out of range. */
function zoneOffsetMs(zone: string | undefined): number | undefined {
  if (zone === undefined || zone === 'Z' || zone === 'z') return 0;
  const [, sign, hours, minutes] = ZONE.exec(zone) ?? [];
  const h = Number(hours);
  const m = Number(minutes ?? '0');
  if (h > 23 || m > 59) return undefined;
  return (sign === '-' ? -1 : 1) * (h * MS_PER_HOUR + m * MS_PER_MINUTE);
}

function parseTimestamp(text: string): Instant | undefined {
  const parts = TIMESTAMP.exec(text.trim());
  if (parts === null) return undefined;
  const [, year, month, day, hour, minute, second, fraction, zone] = parts;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  const h = Number(hour ?? '0');
  const mi = Number(minute ?? '0');
  const s = Number(second ?? '0');
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined;
  if (h > 23 || mi > 59 || s > 59) return undefined;
  const offset = zoneOffsetMs(zone);
  if (offset === undefined) return undefined;
  const digits = fraction ?? '';
  const fractionMs = Number(digits.slice(0, 3).padEnd(3, '0'));
  const ms =
    daysFromCivil(y, mo, d) * MS_PER_DAY +
    h * MS_PER_HOUR +
    mi * MS_PER_MINUTE +
    s * 1000 +
    fractionMs -
    offset;
  return { ms, afterMs: /[1-9]/.test(digits.slice(3)) };
}

/** The instant of a timestamp string or Date; undefined when it is neither. */
export function parseInstant(value: unknown): Instant | undefined {
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isFinite(ms) ? { ms, afterMs: false } : undefined;
  }
  return typeof value === 'string' ? parseTimestamp(value) : undefined;
}

/** instant > ms, exactly. */
export function isAfter(instant: Instant, ms: number): boolean {
  return instant.ms > ms || (instant.ms === ms && instant.afterMs);
}

/** `2026-11-21T10:00:01.000Z`; years outside 0..9999 as Date prints them. */
export function formatInstant(instant: Instant): string {
  const date = new Date(instant.ms);
  return Number.isNaN(date.getTime()) ? String(instant.ms) : date.toISOString();
}
