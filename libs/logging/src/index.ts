/**
 * libs/logging: the apps' logs through one pino logger behind Nest's Logger (JSON lines, or text
 * at a terminal), and lines a client can cause at will, rate-limited per kind.
 */
export { createPinoLogger, resolveFormat } from './create-logger';
export type { LogDestination, LogOptions } from './create-logger';
export { logListening } from './listening';
export { LogBudget } from './log-budget';
export { OncePerOutage } from './once-per-outage';
export { PinoNestLogger } from './pino-nest-logger';
export type { LogFields } from './pino-nest-logger';
export { flushThrottledLogs, THROTTLED_LINES_PER_SECOND, ThrottledLog } from './throttled-log';
export { logStartFailure, useLogger } from './use-logger';
