import type { AcquireRequest } from '@app/contracts/messages/acquire';
import { DEFAULT_QUEUE_MAX_WAIT_MS } from '@app/contracts/config/gocc-default';

/**
 * How long an acquire may go unanswered: `timeoutMs`, plus, for one that may wait, the wait it
 * asked for (the sooner of maxWaitMs and deadline). A waiter that names neither waits up to its
 * quota's queue.maxWaitMs, which the client cannot know: it allows the default, 30 s.
 */
export function acquireTimeoutMs(request: AcquireRequest, timeoutMs: number): number {
  if (request.wait !== true) return timeoutMs;
  const untilDeadline =
    request.deadline === undefined ? undefined : Math.max(0, request.deadline - Date.now());
  const wait =
    request.maxWaitMs === undefined
      ? (untilDeadline ?? DEFAULT_QUEUE_MAX_WAIT_MS)
      : Math.min(request.maxWaitMs, untilDeadline ?? request.maxWaitMs);
  return timeoutMs + wait;
}

/** The longest delay a Node timer keeps (about 24.8 days): a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timeout as a timer can arm it: a longer one (a far deadline, Infinity) waits the longest. */
export function timerDelayMs(timeoutMs: number): number {
  return Math.min(timeoutMs, MAX_TIMER_MS);
}

/** A call's own timeoutMs is checked as the client's is, before anything is sent. */
export function checkCallOptions(options: { readonly timeoutMs?: number } | undefined): void {
  const timeoutMs = options?.timeoutMs;
  if (timeoutMs !== undefined && !(timeoutMs > 0)) {
    throw new RangeError('timeoutMs: must be a number > 0');
  }
}
