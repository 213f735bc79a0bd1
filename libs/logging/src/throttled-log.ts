import { Logger } from '@nestjs/common';
import { LogBudget } from './log-budget';
import type { LogFields } from './pino-nest-logger';

/** Lines of one kind written per second at most; the rest are counted in one line. */
export const THROTTLED_LINES_PER_SECOND = 10;
const WINDOW_MS = 1_000;

const every = new Set<LogBudget>();

/**
 * A kind of line a client can cause at will (bad input, failures of its requests): written at
 * most THROTTLED_LINES_PER_SECOND a second, then one line saying how many were suppressed, so a
 * flood cannot fill a disk. Every line carries `kind`. Meant for module-level constants: each
 * instance lives as long as the process.
 */
export class ThrottledLog {
  private readonly logger: Logger;
  private readonly budget: LogBudget;

  constructor(
    context: string,
    readonly kind: string,
    private readonly level: 'warn' | 'error',
    perSecond = THROTTLED_LINES_PER_SECOND,
  ) {
    this.logger = new Logger(context);
    this.budget = new LogBudget(perSecond, WINDOW_MS, (suppressed) =>
      this.logger[this.level]({
        msg: `${suppressed} more ${kind} lines suppressed (at most ${perSecond} a second)`,
        kind,
        suppressed,
      } satisfies LogFields),
    );
    every.add(this.budget);
  }

  /** Writes the line `describe` builds, unless over budget (then it is only counted, not built). */
  write(describe: () => LogFields): void {
    if (this.budget.take()) this.logger[this.level]({ ...describe(), kind: this.kind });
  }
}

/** Shutdown: the counts of suppressed lines not yet written are written now. */
export function flushThrottledLogs(): void {
  for (const budget of every) budget.flush();
}
