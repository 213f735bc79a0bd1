/** Numbers, durations and instants as an operator reads them. */

const integer = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });

export function count(n: number): string {
  return integer.format(n);
}

export function rate(perSecond: number): string {
  return perSecond >= 100 ? integer.format(perSecond) : decimal.format(perSecond);
}

/** 250 -> "250ms", 60000 -> "1m", 86400000 -> "1d", 90000 -> "90s". */
export function duration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1_000, 's'],
  ];
  for (const [size, unit] of units) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** An ISO instant in the browser's time zone, to the second. */
export function instant(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}
