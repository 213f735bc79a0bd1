import { API_ROUTES, fieldFailure, invalidRequestReply } from '@app/contracts';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { logRefusal } from './refusal-log';
import { TEXT } from './replies';

const FIELD = 'authorization';
const BEARER = /^Bearer +(\S+) *$/i;

/**
 * DEBUG_TOKEN (docs/contract.md, HTTP): the routes that show the keys a replica holds and their
 * counts (`/debug`, `/debug/:key`, `/v1/stats/:key`) answer 401 to a request without
 * `Authorization: Bearer <token>`, before their handler runs. Undefined when no token is set: the
 * routes are open, at no cost. The comparison takes as long whatever the token sent.
 */
export function requireDebugToken(
  token: string | undefined,
): onRequestAsyncHookHandler | undefined {
  if (token === undefined) return undefined;
  const expected = digest(token);
  return async (request, reply) => {
    const given = BEARER.exec(request.headers.authorization ?? '')?.[1];
    if (given !== undefined && timingSafeEqual(digest(given), expected)) return;
    const rule =
      given === undefined
        ? 'must be Bearer <DEBUG_TOKEN> (this route lists keys)'
        : 'the bearer token is not DEBUG_TOKEN';
    return refuse(request, reply, rule);
  };
}

/** Hashed first, so that both sides have one length and compare in constant time. */
function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** 401 in the route's shape: a reply JSON on `/v1/*`, GoCC's text on `/debug`. */
function refuse(request: FastifyRequest, reply: FastifyReply, rule: string): FastifyReply {
  const failure = fieldFailure(FIELD, rule);
  logRefusal(reply, 401, failure);
  reply.code(401).header('www-authenticate', 'Bearer');
  if (request.routeOptions.url === API_ROUTES.stats) {
    return reply.send(invalidRequestReply(failure));
  }
  return reply.type(TEXT).send(failure.reason);
}
