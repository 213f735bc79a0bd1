/** A tick on the time axis, in the browser's time zone: 14:05, or 14:05:30 when ticks are less than a minute apart. */
export function clockTick(epochSeconds: number, stepSeconds: number): string {
  const date = new Date(epochSeconds * 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  const hhmm = `${two(date.getHours())}:${two(date.getMinutes())}`;
  return stepSeconds < 60 ? `${hhmm}:${two(date.getSeconds())}` : hhmm;
}
