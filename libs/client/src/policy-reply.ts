import type { AcquireReply, AcquireRequest } from '@app/contracts/messages/acquire';
import { LimiterUnavailableError, type UnavailableReason } from './errors';
import type { ClientAcquireReply, FailurePolicy } from './options';
import { undecidedReply } from './replies';
import { Unanswered } from './unanswered';

const MESSAGES: Record<UnavailableReason, string> = {
  'no-responders': 'no limiter is subscribed to the subject',
  timeout: 'no limiter answered in time',
  'connection-closed': 'the NATS connection is closed',
  http: 'the limiter could not be reached over HTTP',
  'invalid-reply': 'the answer is not a limiter reply',
};

const described = (reason: UnavailableReason, detail: string | undefined): string =>
  detail === undefined ? MESSAGES[reason] : `${MESSAGES[reason]}: ${detail}`;

/** The error for an unanswered call (failurePolicy 'throw', and calls that are not decisions). */
export function unavailableError(
  reason: UnavailableReason,
  requestId?: string,
  detail?: string,
): LimiterUnavailableError {
  return new LimiterUnavailableError(reason, described(reason, detail), requestId);
}

/**
 * The answer the failure policy gives for an acquire or decide no limiter answered: a refusal
 * ('closed') or an admission ('open'), marked `policy: true`, its reason saying why; 'throw' throws.
 */
export function policyReply(
  policy: FailurePolicy,
  request: AcquireRequest,
  reason: UnavailableReason,
  detail?: string,
): ClientAcquireReply {
  if (policy === 'throw') throw unavailableError(reason, request.requestId, detail);
  const code = policy === 'open' ? 'OK' : 'UNAVAILABLE';
  const why = `failurePolicy ${policy}: ${described(reason, detail)}`;
  return { ...undecidedReply(request, code, why), policy: true };
}

/** An acquire or decide reply, or the failure policy's answer when no limiter answered. */
export function replyOrPolicy(
  reply: AcquireReply | Unanswered,
  policy: FailurePolicy,
  request: AcquireRequest,
): ClientAcquireReply {
  if (!(reply instanceof Unanswered)) return reply;
  return policyReply(policy, request, reply.reason, reply.detail);
}

/** A release, usage or stats reply; the error of a call no limiter answered is thrown. */
export function replyOrThrow<T>(reply: T | Unanswered): T {
  if (reply instanceof Unanswered) throw unavailableError(reply.reason, undefined, reply.detail);
  return reply;
}
