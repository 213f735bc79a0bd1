/**
 * The assertion of a bounded flood of throttled log lines, for specs only: it uses jest's `expect`,
 * so it is kept out of log-lines.ts, which the benchmarks compile and import outside jest.
 */
import { THROTTLED_LINES_PER_SECOND } from '@app/logging';
import { inParallel } from './limiter-http';
import { logLines, type LogLine } from './log-lines';
import { waitUntil } from './nats-process';

/**
 * Sends `count` requests that each cause a line of `kind` (a flood of bad input, `concurrency` at
 * a time) and checks the rate limit of such lines: every request is either written or counted in
 * a `suppressed` line, and the lines number at most THROTTLED_LINES_PER_SECOND (plus one count
 * line) per window of a second begun during the flood, or just before it. Answers the lines
 * written, for the caller to check their fields.
 */
export async function expectBoundedFlood(
  app: { output(): string },
  kind: string,
  count: number,
  send: (i: number) => Promise<void>,
  concurrency = 25,
): Promise<LogLine[]> {
  const before = logLines(app.output()).length;
  const started = Date.now();
  await inParallel(count, concurrency, send);
  const tookMs = Date.now() - started;
  const ofKind = (): LogLine[] =>
    logLines(app.output())
      .slice(before)
      .filter((l) => l['kind'] === kind);
  const accounted = (lines: LogLine[]): number =>
    lines.reduce((sum, l) => sum + (typeof l['suppressed'] === 'number' ? l['suppressed'] : 1), 0);
  // The last window's count line comes when that window ends.
  await waitUntil(`${count} ${kind} accounted`, () => accounted(ofKind()) >= count, 30_000);
  const lines = ofKind();
  expect(accounted(lines)).toBe(count);
  expect(lines.some((l) => typeof l['suppressed'] === 'number')).toBe(true);
  const windows = Math.floor(tookMs / 1000) + 2;
  expect(lines.length).toBeLessThanOrEqual(windows * (THROTTLED_LINES_PER_SECOND + 1));
  return lines.filter((l) => l['suppressed'] === undefined);
}
