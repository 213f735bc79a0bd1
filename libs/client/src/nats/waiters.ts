import type { AcquireRequest } from '@app/contracts/messages/acquire';
import type { ParseResult } from '@app/contracts/validation/parse-result';
import { decodeReply } from '../codec';
import type { UnavailableReason } from '../errors';
import type { ClientAcquireReply, FailurePolicy } from '../options';
import type { PendingCall } from '../pending-call';
import { policyReply, replyOrPolicy, replyOrThrow, unavailableError } from '../policy-reply';
import {
  acquireResult,
  batchReplies,
  decisionReply,
  operationReply,
  unnestBatchReason,
} from '../replies';
import { Unanswered } from '../unanswered';
import type { ReplyWaiter } from './reply-mux';

/** An acquire or decide sent alone: the limiter's reply, or the failure policy's. */
export class DecisionWaiter implements ReplyWaiter {
  constructor(
    private readonly call: PendingCall<ClientAcquireReply>,
    private readonly request: AcquireRequest,
    private readonly policy: FailurePolicy,
  ) {}

  onReply(data: Uint8Array): void {
    this.call.settleWith(() =>
      replyOrPolicy(decisionReply(decodeReply(data), this.request), this.policy, this.request),
    );
  }

  onFailure(reason: UnavailableReason): void {
    this.call.settleWith(() => policyReply(this.policy, this.request, reason));
  }
}

/** Release, usage, stats: no decision to make up, so an unanswered call always throws. */
export class OperationWaiter<T> implements ReplyWaiter {
  constructor(
    private readonly call: PendingCall<T>,
    private readonly parse: (value: unknown) => ParseResult<T>,
  ) {}

  onReply(data: Uint8Array): void {
    this.call.settleWith(() => replyOrThrow(operationReply(decodeReply(data), this.parse)));
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
    let replies: ReturnType<typeof batchReplies>;
    try {
      replies = batchReplies(decodeReply(data), this.requests);
    } catch (error) {
      // The limiter refused the batch as a whole INVALID_REQUEST: every caller hears why.
      for (const call of this.calls) call.fail(error);
      return;
    }
    // No limiter's reply (a foreign responder on the subject): the failure policy answers each.
    if (replies instanceof Unanswered) {
      this.onFailure(replies.reason, replies.detail);
      return;
    }
    for (let i = 0; i < this.calls.length; i++) {
      const reply = replies[i]!;
      this.calls[i]!.settleWith(() => acquireResult(unnestBatchReason(reply, i)));
    }
  }

  onFailure(reason: UnavailableReason, detail?: string): void {
    for (let i = 0; i < this.calls.length; i++) {
      const request = this.requests[i]!;
      this.calls[i]!.settleWith(() => policyReply(this.policy, request, reason, detail));
    }
  }
}
