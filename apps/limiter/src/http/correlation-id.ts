import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { HEADERS, usableCorrelationId } from '@app/contracts';

const HEADER = HEADERS.correlationId.toLowerCase();

/** Anything but 1..128 printable ASCII is replaced, so an echo never carries odd bytes back. */
function echo(request: IncomingMessage, response: ServerResponse): void {
  response.setHeader(
    HEADERS.correlationId,
    usableCorrelationId(request.headers[HEADER]) ?? randomUUID(),
  );
}

/**
 * Every response carries the request's X-Correlation-ID, or a fresh one when it had none. Set on
 * the raw response before Fastify sees the request, so it also covers what Fastify answers
 * itself (a malformed URL, an oversized body, 404) and costs no hook on the hot routes.
 */
export function echoCorrelationIds(server: Server): void {
  server.prependListener('request', echo);
}

/** The id the response carries (the client's or a fresh one), for the logs. */
export function correlationIdOf(response: ServerResponse): string | undefined {
  const id = response.getHeader(HEADERS.correlationId);
  return typeof id === 'string' ? id : undefined;
}
