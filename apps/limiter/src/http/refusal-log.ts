import { ThrottledLog } from '@app/logging';
import type { FastifyReply } from 'fastify';
import { correlationIdOf } from './correlation-id';

/** What was wrong with a request's input: the field it names, and the reason as answered. */
export interface FieldRefusal {
  readonly field: string;
  readonly reason: string;
}

// Clients cause these at will: a flood of them writes a bounded number of lines.
const refusals = new ThrottledLog('LimiterHttp', 'http.invalid', 'warn');
const failures = new ThrottledLog('LimiterHttp', 'http.error', 'error');

/**
 * A request refused for its input (400, and the 401, 403, 408, 413 and 431 that name a field):
 * logged with the field, the client's address and the correlation id the response carries.
 * Admitted and rate-limited requests are never logged.
 */
export function logRefusal(reply: FastifyReply, status: number, refusal: FieldRefusal): void {
  refusals.write(() => ({
    msg: `${status} ${refusal.reason}`,
    status,
    field: refusal.field,
    method: reply.request.method,
    route: routeOf(reply),
    client: reply.request.ip,
    correlationId: correlationIdOf(reply.raw),
  }));
}

/**
 * What was refused before a route ran (Node's HTTP/1.1 parser, or an HTTP/2 stream's timeout or
 * path): no route, no correlation id.
 */
export function logConnectionRefusal(
  client: string | undefined,
  status: number,
  refusal: FieldRefusal,
): void {
  refusals.write(() => ({
    msg: `${status} ${refusal.reason}`,
    status,
    field: refusal.field,
    client,
  }));
}

/** A request that failed unexpectedly (answered 500): a bug, with its stack. */
export function logFailure(reply: FastifyReply, error: Error): void {
  failures.write(() => ({
    msg: `${reply.request.method} ${routeOf(reply)}: ${error.message}`,
    status: 500,
    method: reply.request.method,
    route: routeOf(reply),
    client: reply.request.ip,
    correlationId: correlationIdOf(reply.raw),
    err: error,
  }));
}

/** The route's pattern (`/rate/:key`), never the path: keys are the clients' data. */
function routeOf(reply: FastifyReply): string {
  return reply.request.routeOptions.url ?? '(no route)';
}
