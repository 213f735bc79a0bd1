/**
 * Reading what the apps log (JSON lines when their stdout is a pipe, as in these tests).
 */
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

/** The JSON lines of `output`, skipping any other (a runtime warning on stderr, say). */
function jsonLinesOnly(output: string): LogLine[] {
  return output
    .split('\n')
    .slice(0, -1)
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine];
      } catch {
        return [];
      }
    });
}

/**
 * Polls an app's lines until one satisfies `match` (its pipe may reach this process late). Lines
 * that are not JSON are skipped here (a test that checks the format says so itself): a throw would
 * only turn into a 30 s wait that names the wrong cause.
 */
export async function lineLogged(
  app: { output(): string },
  what: string,
  match: (line: LogLine) => boolean,
): Promise<LogLine> {
  let found: LogLine | undefined;
  await waitUntil(
    `logged: ${what}`,
    () => (found = jsonLinesOnly(app.output()).find(match)) !== undefined,
    30_000,
  );
  return found!;
}
