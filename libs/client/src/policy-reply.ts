import type { AcquireRequest } from '@app/contracts';
import { LimiterUnavailableError, type UnavailableReason } from './errors';
import type { ClientAcquireReply, FailurePolicy } from './options';
import { undecidedReply } from './replies';

const MESSAGES: Record<UnavailableReason, string> = {
  'no-responders': 'no limiter is subscribed to the subject',
  timeout: 'no limiter answered in time',
  'connection-closed': 'the NATS connection is closed',
  http: 'the limiter could not be reached over HTTP',
};

/** The error for an unanswered call (failurePolicy 'throw', and calls that are not decisions). */
export function unavailableError(
  reason: UnavailableReason,
  requestId?: string,
  detail?: string,
): LimiterUnavailableError {
  const message = detail === undefined ? MESSAGES[reason] : `${MESSAGES[reason]}: ${detail}`;
  return new LimiterUnavailableError(reason, message, requestId);
}

/**
 * The answer the failure policy gives for an acquire or decide no limiter answered: a refusal
 * ('closed') or an admission ('open'), marked `policy: true`; 'throw' throws.
 */
export function policyReply(
  policy: FailurePolicy,
  request: AcquireRequest,
  reason: UnavailableReason,
): ClientAcquireReply {
  if (policy === 'throw') throw unavailableError(reason, request.requestId);
  const code = policy === 'open' ? 'OK' : 'UNAVAILABLE';
  const why = `failurePolicy ${policy}: ${MESSAGES[reason]}`;
  return { ...undecidedReply(request, code, why), policy: true };
}
