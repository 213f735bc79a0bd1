import type { AcquireReply, AcquireRequest, BatchReply } from '@app/contracts';
import { decodeJson } from '../codec';
import type { UnavailableReason } from '../errors';
import type { ClientAcquireReply, FailurePolicy } from '../options';
import type { PendingCall } from '../pending-call';
import { policyReply, unavailableError } from '../policy-reply';
import { acquireResult, batchRefusalFor, operationResult, unnestBatchReason } from '../replies';
import type { ReplyWaiter } from './reply-mux';

/** An acquire or decide sent alone: the limiter's reply, or the failure policy's. */
export class DecisionWaiter implements ReplyWaiter {
  constructor(
    private readonly call: PendingCall<ClientAcquireReply>,
    private readonly request: AcquireRequest,
    private readonly policy: FailurePolicy,
  ) {}

  onReply(data: Uint8Array): void {
    this.call.settleWith(() => acquireResult(decodeJson(data) as AcquireReply));
  }

  onFailure(reason: UnavailableReason): void {
    this.call.settleWith(() => policyReply(this.policy, this.request, reason));
  }
}

/** Release, usage, stats: no decision to make up, so an unanswered call always throws. */
export class OperationWaiter<T> implements ReplyWaiter {
  constructor(private readonly call: PendingCall<T>) {}

  onReply(data: Uint8Array): void {
    this.call.settleWith(() => operationResult<T>(decodeJson(data)));
  }

  onFailure(reason: UnavailableReason): void {
    this.call.fail(unavailableError(reason));
  }
}

/** The callers of one acquire.batch, each answered by its own entry. */
export class BatchWaiter implements ReplyWaiter {
  constructor(
    private readonly calls: readonly PendingCall<ClientAcquireReply>[],
    private readonly requests: readonly AcquireRequest[],
    private readonly policy: FailurePolicy,
  ) {}

  onReply(data: Uint8Array): void {
    let replies: unknown;
    try {
      const json = decodeJson(data);
      if (json !== null && batchRefusalFor(json, this.requests[0]!) !== undefined) {
        this.refuseEach(json);
        return;
      }
      replies = json === null ? undefined : operationResult<BatchReply | undefined>(json)?.replies;
    } catch (error) {
      for (const call of this.calls) call.fail(error);
      return;
    }
    // JSON that is no BatchReply (a foreign responder on the subject): every caller still hears.
    if (!isReplyList(replies)) {
      const error = unavailableError('timeout', undefined, 'the reply is not a batch reply');
      for (const call of this.calls) call.fail(error);
      return;
    }
    for (let i = 0; i < this.calls.length; i++) {
      const call = this.calls[i]!;
      if (call.settled) continue;
      const reply = replies[i];
      if (reply === undefined) call.fail(unavailableError('timeout', undefined, 'short batch'));
      else call.settleWith(() => acquireResult(unnestBatchReason(reply, i)));
    }
  }

  private refuseEach(refusal: unknown): void {
    for (let i = 0; i < this.calls.length; i++) {
      this.calls[i]!.succeed(batchRefusalFor(refusal, this.requests[i]!)!);
    }
  }

  onFailure(reason: UnavailableReason): void {
    for (let i = 0; i < this.calls.length; i++) {
      const request = this.requests[i]!;
      this.calls[i]!.settleWith(() => policyReply(this.policy, request, reason));
    }
  }
}

function isReplyList(value: unknown): value is readonly AcquireReply[] {
  return Array.isArray(value);
}
