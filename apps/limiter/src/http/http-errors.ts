import {
  API_ROUTES,
  BODY_FIELD,
  fieldFailure,
  invalidAcquireReply,
  invalidRequestReply,
  type ErrorReply,
} from '@app/contracts';
import { Logger } from '@nestjs/common';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_BODY_BYTES } from './http-limits';

const logger = new Logger('LimiterHttp');

/** Routes whose replies are AcquireReplies, so even a refused body is answered in that shape. */
const ACQUIRE_SHAPED: ReadonlySet<string> = new Set([API_ROUTES.acquire, API_ROUTES.decide]);

/**
 * What Fastify itself refuses before a handler runs (a body over the limit, a Content-Length that
 * lies) is still answered with a reply naming `body`. Anything else is a bug: logged, 500.
 */
export function answerHttpError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const status = error.statusCode ?? 500;
  if (status < 400 || status >= 500) {
    logger.error(`${request.method} ${request.url}: ${error.stack ?? error.message}`);
    const body: ErrorReply = {
      ok: false,
      allowed: false,
      code: 'UNAVAILABLE',
      reason: 'internal error',
    };
    reply.code(500).send(body);
    return;
  }
  const failure = fieldFailure(
    BODY_FIELD,
    status === 413 ? `must be at most ${MAX_BODY_BYTES} bytes` : error.message,
  );
  const body = ACQUIRE_SHAPED.has(request.routeOptions.url ?? '')
    ? invalidAcquireReply(failure, undefined)
    : invalidRequestReply(failure);
  reply.code(status).send(body);
}

/**
 * What Fastify refuses while routing, before any route of ours runs: a path with a malformed
 * percent-encoding (`/rate/%ZZ`) or a parameter longer than the router takes. The only parameters
 * in our paths are keys and request ids, so the reply names the path parameter.
 */
export function answerRoutingError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const field =
    request.url.startsWith('/rate/') && request.url.split('/').length > 3 ? 'requestId' : 'key';
  const reason =
    error.code === 'FST_ERR_BAD_URL'
      ? 'is not a valid percent-encoded path segment'
      : 'is too long';
  const failure = fieldFailure(field, reason);
  if (request.url.startsWith('/v1/')) {
    reply.code(400).send(invalidRequestReply(failure));
    return;
  }
  // GoCC's routes answer refusals other than 429 as text naming the field.
  reply.code(400).type('text/plain; charset=utf-8').send(failure.reason);
}
