import type { LogFormat, LogLevel } from '@app/contracts';
import { isatty } from 'node:tty';
import pino, { type DestinationStream, type Logger as Pino } from 'pino';
import pretty from 'pino-pretty';

export interface LogOptions {
  /** `limiter` or `admin`: on every line, so both apps can share one stream. */
  readonly app: string;
  readonly level: LogLevel;
  /** Undefined: json, or pretty when the destination is a terminal. */
  readonly format: LogFormat | undefined;
  /** Where lines go; stdout when absent. */
  readonly destination?: LogDestination;
}

/** A stream lines are written to, and whether it is a terminal (colour is for terminals only). */
export interface LogDestination {
  readonly stream: DestinationStream;
  readonly isTerminal: boolean;
}

const STDOUT = 1;

/** The JSON format or text, as LOG_FORMAT says, or as stdout suggests when it says nothing. */
export function resolveFormat(format: LogFormat | undefined, isTerminal: boolean): LogFormat {
  return format ?? (isTerminal ? 'pretty' : 'json');
}

/**
 * The process's one pino logger. JSON lines carry `level` as its name, `time` in ISO 8601 (UTC),
 * `app`, `pid`, then the context and fields of the line, then `msg`. Writes are synchronous: a
 * line is out before the process can exit or crash, and nothing on the hot path logs, so the
 * event loop never waits on it in normal operation.
 */
export function createPinoLogger(options: LogOptions): Pino {
  const isTerminal = options.destination?.isTerminal ?? isatty(STDOUT);
  const format = resolveFormat(options.format, isTerminal);
  const stream =
    format === 'json'
      ? (options.destination?.stream ?? pino.destination({ dest: STDOUT, sync: true }))
      : pretty({
          destination: options.destination?.stream ?? STDOUT,
          sync: true,
          // ANSI codes only for a person at a terminal, never into a file or a pipe.
          colorize: isTerminal,
          singleLine: true,
          translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
          ignore: 'pid,hostname,app,context',
          messageFormat: '{if context}[{context}] {end}{msg}',
        });
  return pino(
    {
      level: options.level,
      base: { app: options.app, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
}
