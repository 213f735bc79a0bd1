import type { AcquireRequest } from '@app/contracts';
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
