import {
  API_ROUTES,
  BODY_FIELD,
  fieldFailure,
  invalidAcquireReply,
  invalidRequestReply,
  type ErrorReply,
  type ParseFailure,
} from '@app/contracts';
import { STATUS_CODES } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_BODY_BYTES } from './http-limits';
import { logConnectionRefusal, logFailure, logRefusal } from './refusal-log';

/** GoCC's routes answer refusals other than 429 as text naming the field. */
export function isGoccPath(path: string): boolean {
  return path.startsWith('/rate/') || path.startsWith('/debug/');
}

/** Routes whose replies are AcquireReplies, so even a refused body is answered in that shape. */
export const ACQUIRE_SHAPED: ReadonlySet<string> = new Set([API_ROUTES.acquire, API_ROUTES.decide]);

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
    logFailure(reply, error);
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
  logRefusal(reply, status, failure);
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
  logRefusal(reply, 400, failure);
  if (request.url.startsWith('/v1/')) {
    reply.code(400).send(invalidRequestReply(failure));
    return;
  }
  // GoCC's routes answer refusals other than 429 as text naming the field.
  reply.code(400).type('text/plain; charset=utf-8').send(failure.reason);
}

/**
 * What Node's HTTP parser refuses before Fastify sees a request (Fastify's `clientErrorHandler`):
 * a request not received within HTTP_REQUEST_TIMEOUT_MS (408), headers over Node's 16 KiB (431),
 * bytes that are not HTTP, such as raw non-ASCII bytes in a path (400). Answered naming the field,
 * in the shape of the route when the path shows it (text on GoCC's), rather than with Fastify's
 * own JSON; the connection closes once the answer is written.
 */
export function answerClientError(error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const path = requestPath(error.rawPacket);
  const [status, failure] = clientFailure(error.code, path);
  logConnectionRefusal(socket.remoteAddress, status, failure);
  const { type, body } = refusalBody(path, failure);
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\n` +
      `content-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  socket.destroySoon();
}

/**
 * The same refusals on an HTTP/2 stream, which has no parser error of Node's to catch: a request
 * not received in time (`ERR_HTTP_REQUEST_TIMEOUT`) or a path with raw bytes (`HPE_INVALID_URL`).
 * The stream ends with the answer; its session goes on.
 */
export function answerStreamRefusal(response: Http2ServerResponse, code: ClientErrorCode): void {
  if (response.headersSent) return;
  const path = response.req.url.split('?', 1)[0]!;
  const [status, failure] = clientFailure(code, path);
  logConnectionRefusal(response.req.socket.remoteAddress, status, failure);
  const { type, body } = refusalBody(path, failure);
  response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/** The codes answerStreamRefusal answers (Node's names for the HTTP/1.1 parser's refusals). */
export type ClientErrorCode = 'ERR_HTTP_REQUEST_TIMEOUT' | 'HPE_INVALID_URL';

/** A refusal's body in the shape of the route `path` belongs to: text on GoCC's, JSON elsewhere. */
function refusalBody(path: string, failure: ParseFailure): { type: string; body: string } {
  if (isGoccPath(path)) return { type: 'text/plain; charset=utf-8', body: failure.reason };
  return {
    type: 'application/json; charset=utf-8',
    body: JSON.stringify(invalidRequestReply(failure)),
  };
}

function clientFailure(code: string, path: string): [number, ParseFailure] {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [
        408,
        fieldFailure(BODY_FIELD, 'was not received in full in time (HTTP_REQUEST_TIMEOUT_MS)'),
      ];
    case 'HPE_HEADER_OVERFLOW':
      return [431, fieldFailure('headers', 'must be at most 16 KiB in all')];
    case 'HPE_INVALID_URL':
      // Keys (and request ids) are the only parameters of our paths.
      return [
        400,
        fieldFailure(
          KEYED_PATH.test(path) ? 'key' : 'url',
          'must be percent-encoded (raw bytes outside printable ASCII are not HTTP)',
        ),
      ];
    default:
      return [400, fieldFailure(BODY_FIELD, `is not a valid HTTP/1.1 request (${code})`)];
  }
}

const KEYED_PATH = /^\/(rate|debug|v1\/stats)\//;

/**
 * The path of the request line in what the parser received (`rawPacket`, a Buffer, whatever
 * Fastify's types say), as far as it got.
 */
function requestPath(raw: unknown): string {
  const line = Buffer.isBuffer(raw) ? raw.subarray(0, 4096).toString('latin1') : '';
  return line.split(' ', 2)[1] ?? '';
}
