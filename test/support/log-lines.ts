/**
 * Reading what the apps log (JSON lines when their stdout is a pipe, as in these tests).
 */
import { THROTTLED_LINES_PER_SECOND } from '@app/logging';
import { inParallel } from './limiter-http';
import { waitUntil } from './nats-process';

/** One JSON log line: the fields every line has, and whatever fields it carries. */
export interface LogLine {
  readonly level: string;
  readonly time: string;
  readonly app: string;
  readonly msg: string;
  readonly context?: string;
  readonly [field: string]: unknown;
}

/**
 * Every complete line of `output` parsed (a line still being written is left out); throws naming
 * a line that is not JSON.
 */
export function logLines(output: string): LogLine[] {
  const lines = output.split('\n').slice(0, -1);
  return lines.map((line, i) => {
    try {
      return JSON.parse(line) as LogLine;
    } catch {
      throw new Error(`line ${i + 1} is not JSON: ${line}`);
    }
  });
}

/** The messages, one a line, for tests that look for what was said (JSON escapes quotes). */
export function logMessages(output: string): string {
  return logLines(output)
    .map((line) => line.msg)
    .join('\n');
}

/** The port of the start line ("listening on ..."), once it is written. */
export function boundPort(output: string): number | undefined {
  const complete = output.split('\n').slice(0, -1);
  const line = complete.find((l) => l.includes('"listening on '));
  if (line === undefined) return undefined;
  const port = (JSON.parse(line) as LogLine)['port'];
  return typeof port === 'number' ? port : undefined;
}

/** Polls an app's lines until one satisfies `match` (its pipe may reach this process late). */
export async function lineLogged(
  app: { output(): string },
  what: string,
  match: (line: LogLine) => boolean,
): Promise<LogLine> {
  let found: LogLine | undefined;
  await waitUntil(
    `logged: ${what}`,
    () => (found = logLines(app.output()).find(match)) !== undefined,
    30_000,
  );
  return found!;
}

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
