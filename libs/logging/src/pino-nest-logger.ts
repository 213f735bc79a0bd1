import type { LoggerService } from '@nestjs/common';
import type { Level, Logger as Pino } from 'pino';

/** A line's structured fields; `msg` is its text. */
export type LogFields = { readonly msg: string } & Readonly<Record<string, unknown>>;

/** Nest's error(message, stack, context): a stack is text with "at file:line:col" frames. */
const STACK = /\n\s+at .+/;
/** Pino children kept, one per context. */
const MAX_CONTEXTS = 256;

/**
 * Nest's LoggerService over one pino logger, so every `new Logger(context)` of the apps and of
 * Nest itself writes through pino: `logger.warn('text')`, or `logger.warn({ msg, ...fields })`
 * for a line with structured fields. Nest passes the Logger's context as the last parameter; it
 * becomes the `context` field, through one pino child per context (its binding is serialised once).
 */
export class PinoNestLogger implements LoggerService {
  private readonly children = new Map<string, Pino>();

  constructor(readonly pino: Pino) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    const last = params.at(-1);
    // A trailing string is Nest's context, unless it is a stack: error(message, stack) without a
    // context would otherwise make every distinct stack a context of its own (a child each).
    const context =
      typeof last === 'string' && !STACK.test(last) ? (params.pop() as string) : undefined;
    const logger = this.forContext(context);
    if (!logger.isLevelEnabled(level)) return;
    if (params.length > 0 && params.at(-1) === undefined) params.pop(); // error() without a stack
    const fields: Record<string, unknown> = {};
    const stack = params.find((p): p is string => typeof p === 'string' && STACK.test(p));
    if (stack !== undefined) fields['stack'] = stack;
    const rest = params.filter((p) => p !== stack);
    if (rest.length > 0) fields['args'] = rest;
    if (message instanceof Error) {
      fields['err'] = message;
      logger[level](fields, message.message);
    } else if (isFields(message)) {
      const { msg, ...own } = message;
      logger[level]({ ...own, ...fields }, msg);
    } else {
      logger[level](fields, String(message));
    }
  }

  private forContext(context: string | undefined): Pino {
    if (context === undefined) return this.pino;
    let child = this.children.get(context);
    if (child === undefined) {
      child = this.pino.child({ context });
      // Contexts are the code's own names (a few dozen); past that, something passes data as
      // one, and the children are not kept.
      if (this.children.size < MAX_CONTEXTS) this.children.set(context, child);
    }
    return child;
  }
}

function isFields(message: unknown): message is LogFields {
  return (
    typeof message === 'object' &&
    message !== null &&
    typeof (message as { msg?: unknown }).msg === 'string'
  );
}
