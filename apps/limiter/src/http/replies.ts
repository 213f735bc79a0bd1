import { httpStatusForCode, rateLimitHeaders, type ErrorReply } from '@app/contracts';
import type { Decision, Outcome } from '@app/engine';
import type { FastifyReply } from 'fastify';

const TEXT = 'text/plain; charset=utf-8';

/**
 * RateLimit-* headers describe the limit that decided. A request refused before any limit looked
 * at it (invalid, unknown quota) has none to describe, so it gets none.
 */
export function setRateLimitHeaders(reply: FastifyReply, decision: Decision): void {
  if (decision.code === 'INVALID_REQUEST' || decision.code === 'UNKNOWN_QUOTA') return;
  reply.headers(rateLimitHeaders(decision));
}

/** The JSON API: the status from the code, the reply as the body. */
export function sendDecision(reply: FastifyReply, decision: Decision): void {
  reply.code(httpStatusForCode(decision.code)).send(decision);
}

export function sendText(reply: FastifyReply, status: number, text: string): void {
  reply.code(status).type(TEXT).send(text);
}

/** The reply to a release, usage or stats request the engine could not serve. */
export function failureReply(failure: Outcome<unknown> & { ok: false }): ErrorReply {
  return {
    ok: false,
    allowed: false,
    code: failure.code,
    reason: failure.reason,
    ...(failure.code === 'UNKNOWN_QUOTA' && { field: 'quota' }),
  };
}

export function sendFailure(reply: FastifyReply, failure: ErrorReply): void {
  reply.code(httpStatusForCode(failure.code)).send(failure);
}
