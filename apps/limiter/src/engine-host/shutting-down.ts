import type { ErrorReply } from '@app/contracts';
import { refusal, type Decision, type Outcome } from '@app/engine';

/** The reason of every answer given because the limiter is shutting down (SIGTERM). */
export const SHUTTING_DOWN = 'the limiter is shutting down';

/** An acquire or decide refused while draining, echoing what the request said. */
export function shuttingDownDecision(
  input: { readonly key?: string; readonly quota?: string; readonly requestId?: string } = {},
): Decision {
  const d = refusal(
    'UNAVAILABLE',
    input.requestId ?? '',
    input.key ?? '',
    input.quota ?? '',
    SHUTTING_DOWN,
  );
  d.retryAfterMs = 1000;
  return d;
}

/** Release, usage, stats and resetKey while draining: nothing they did would be saved. */
export const SHUTTING_DOWN_OUTCOME: Outcome<never> = Object.freeze({
  ok: false,
  code: 'UNAVAILABLE',
  reason: SHUTTING_DOWN,
});

/** The same, as the transports' ErrorReply. */
export const SHUTTING_DOWN_REPLY: ErrorReply = Object.freeze({
  ok: false,
  allowed: false,
  code: 'UNAVAILABLE',
  reason: SHUTTING_DOWN,
});

/** What a transport's drain did with the requests in flight, for the shutdown line. */
export interface TransportDrained {
  /** Requests in flight when the drain began (waiting acquires included). */
  readonly inFlight: number;
  /** Of those, the ones still unanswered at the drain deadline: answered UNAVAILABLE or cut. */
  readonly cut: number;
}
