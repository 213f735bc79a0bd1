import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { HEADERS } from '@app/contracts';

const HEADER = HEADERS.correlationId.toLowerCase();
/** 1..128 printable ASCII: anything else is replaced, so an echo never carries odd bytes back. */
const ECHOABLE = /^[\x21-\x7e][\x20-\x7e]{0,127}$/;

function echo(request: IncomingMessage, response: ServerResponse): void {
  const given = request.headers[HEADER];
  response.setHeader(
    HEADERS.correlationId,
    typeof given === 'string' && ECHOABLE.test(given) ? given : randomUUID(),
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
