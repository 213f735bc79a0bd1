import type { FastifyInstance } from 'fastify';
import { MAX_BODY_BYTES } from './http-limits';

/**
 * Hands every body to the handlers as the bytes that arrived, whatever its content type (or none):
 * the handlers validate it with the contract's parsers, so a malformed body is answered
 * INVALID_REQUEST naming `body` rather than by Fastify's own error. Scoped to the routes' plugin.
 */
export function acceptRawBodies(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES },
    (_request, body, done) => done(null, body),
  );
}
