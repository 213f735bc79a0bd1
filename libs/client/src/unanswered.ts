import type { UnavailableReason } from './errors';

/**
 * A call that got no limiter answer, and why: nothing came (a timeout, no responders, a failed
 * connection), or what came is no reply of the contract's (`invalid-reply`, with the rule it
 * breaks in `detail`). The failure policy answers for it.
 */
export class Unanswered {
  constructor(
    readonly reason: UnavailableReason,
    readonly detail?: string,
  ) {}
}

/** What came back is not a reply a limiter sends (not JSON, or not the contract's shape). */
export function invalidReply(detail: string): Unanswered {
  return new Unanswered('invalid-reply', detail);
}
