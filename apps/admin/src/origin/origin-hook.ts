import type { FastifyReply, FastifyRequest } from 'fastify';
import { requestRefusal, type OriginPolicy } from './origin-policy';

/**
 * A Fastify onRequest hook for every route: /graphql (the WebSocket upgrade included, which
 * @fastify/websocket routes through the hooks), the console, GraphiQL and /healthz. A refused
 * request is answered 403 with the reason, before anything else reads it.
 */
export function originHook(policy: OriginPolicy) {
  return async (
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply | undefined> => {
    const { headers, socket } = request.raw;
    const why = requestRefusal(policy, {
      host: headers.host,
      origin: headers.origin,
      port: socket.localPort ?? 0,
    });
    if (why === undefined) return undefined;
    if (headers.upgrade !== undefined) {
      // Node has handed the socket of an upgrade over: no HTTP server closes it after the answer.
      reply.header('connection', 'close').raw.once('finish', () => socket.end());
    }
    // Returning the reply ends the request here: no other hook and no handler run.
    return reply.code(403).type('text/plain; charset=utf-8').send(why);
  };
}
