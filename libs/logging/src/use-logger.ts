import type { ListenConfig } from '@app/contracts';
import { Logger } from '@nestjs/common';
import { createPinoLogger, type LogDestination } from './create-logger';
import { PinoNestLogger } from './pino-nest-logger';

let installed: PinoNestLogger | undefined;

/**
 * Makes pino the logger of the process, for LOG_LEVEL and LOG_FORMAT: every Nest `Logger`, static
 * or not, writes through it from now on. Pass the result as NestFactory's `logger` too.
 */
export function useLogger(
  app: string,
  config: Pick<ListenConfig, 'logLevel' | 'logFormat'>,
  destination?: LogDestination,
): PinoNestLogger {
  installed = new PinoNestLogger(
    createPinoLogger({ app, level: config.logLevel, format: config.logFormat, destination }),
  );
  Logger.overrideLogger(installed);
  return installed;
}

/**
 * A start that failed, logged as fatal in the format of the logs. When the environment could not
 * be read (an invalid LOG_LEVEL, say), the logger was never set up: it is set up with the defaults
 * first, so even that message is JSON in a file and no ANSI code is written.
 */
export function logStartFailure(app: string, context: string, error: unknown): void {
  if (installed === undefined) useLogger(app, { logLevel: 'info', logFormat: undefined });
  new Logger(context).fatal(error instanceof Error ? error : String(error));
}
