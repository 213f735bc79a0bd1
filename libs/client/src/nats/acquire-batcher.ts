import type { AcquireRequest } from '@app/contracts/messages/acquire';
import type { ClientAcquireReply } from '../options';
import type { PendingCall } from '../pending-call';

/** Sends what was queued: one call as a plain acquire, more as one acquire.batch. */
export type BatchSender = (
  calls: PendingCall<ClientAcquireReply>[],
  requests: AcquireRequest[],
) => void;

/**
 * Collects the acquires of one event-loop turn and sends them on the next (setImmediate: after
 * the I/O callbacks and promise continuations of this turn, so callers woken by one reply all make
 * the next batch), or as soon as `maxBatchSize` are waiting.
 */
export class AcquireBatcher {
  private calls: PendingCall<ClientAcquireReply>[] = [];
  private requests: AcquireRequest[] = [];
  private scheduled = false;
  private readonly flushBound = (): void => {
    this.scheduled = false;
    this.flush();
  };

  constructor(
    private readonly send: BatchSender,
    private readonly maxBatchSize: number,
  ) {}

  add(call: PendingCall<ClientAcquireReply>, request: AcquireRequest): void {
    this.calls.push(call);
    this.requests.push(request);
    if (this.calls.length >= this.maxBatchSize) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushBound);
    }
  }

  /** Sends what is queued now (also on close). */
  flush(): void {
    if (this.calls.length === 0) return;
    const calls = this.calls;
    const requests = this.requests;
    this.calls = [];
    this.requests = [];
    this.send(calls, requests);
  }
}
