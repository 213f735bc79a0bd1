/** Durations of the config file: `250ms`, `1s`, `1m`, `1h`, `1d`, or sums such as `1h30m`. */

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
const WHOLE = /^(?:[0-9]+(?:ms|s|m|h|d))+$/;
const PART = /([0-9]+)(ms|s|m|h|d)/g;

export const DURATION_RULE = 'must be a duration such as 250ms, 1s, 1m, 1h or 1d';

/** Milliseconds, or undefined when the text is not a duration of at least 1 ms. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!WHOLE.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(PART)) {
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  }
  return Number.isSafeInteger(total) && total >= 1 ? total : undefined;
}

const LARGEST_FIRST: readonly (readonly [string, number])[] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
];

/** The shortest single-unit spelling: 86400000 → `1d`, 1500 → `1500ms`. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of LARGEST_FIRST) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
