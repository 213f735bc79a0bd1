import type { FastifyRequest } from 'fastify';

/** The request's W3C `traceparent` header (read only when tracing is on), if it has one. */
export function traceparentOf(request: FastifyRequest): string | undefined {
  const value = request.headers.traceparent;
  return typeof value === 'string' ? value : undefined;
}
