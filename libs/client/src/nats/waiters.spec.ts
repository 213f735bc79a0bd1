import type { AcquireRequest } from '@app/contracts';
import { ADMITTED_REPLY } from '@app/contracts/messages/replies.test-util';
import { LimiterUnavailableError } from '../errors';
import type { ClientAcquireReply, FailurePolicy } from '../options';
import { PendingCall } from '../pending-call';
import { BatchWaiter } from './waiters';

const requests: AcquireRequest[] = [{ key: 'a' }, { key: 'b' }];

function batchOf(policy: FailurePolicy = 'closed'): {
  waiter: BatchWaiter;
  calls: PendingCall<ClientAcquireReply>[];
} {
  const calls = requests.map(() => new PendingCall<ClientAcquireReply>());
  return { waiter: new BatchWaiter(calls, requests, policy), calls };
}

const entry = (key: string) => ({ ...ADMITTED_REPLY, key });

describe('BatchWaiter', () => {
  // A reply that is not a BatchReply (a foreign responder on the subject, a proxy): no limiter
  // answered, so the failure policy answers every caller, and the mux's callback must not throw.
  it.each([['{}'], ['{"replies":null}'], ['{"replies":"x"}'], ['null'], ['[]'], ['3'], ['<html>']])(
    "answers every caller by the failure policy when the reply is %s ('throw')",
    async (body) => {
      const { waiter, calls } = batchOf('throw');
      const outcomes = Promise.allSettled(calls.map((call) => call.promise));
      expect(() => waiter.onReply(Buffer.from(body))).not.toThrow();
      for (const outcome of await outcomes) {
        expect(outcome).toMatchObject({ status: 'rejected' });
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(LimiterUnavailableError);
        expect((outcome as PromiseRejectedResult).reason).toMatchObject({
          reason: 'invalid-reply',
        });
      }
    },
  );

  it('answers each caller its own entry', async () => {
    const { waiter, calls } = batchOf();
    const outcomes = Promise.allSettled(calls.map((call) => call.promise));
    waiter.onReply(Buffer.from(JSON.stringify({ replies: [entry('a'), entry('b')] })));
    const [first, second] = await outcomes;
    expect(first).toMatchObject({ status: 'fulfilled', value: { key: 'a', allowed: true } });
    expect(second).toMatchObject({ status: 'fulfilled', value: { key: 'b', allowed: true } });
  });

  it("answers a batch reply one entry short by the failure policy ('closed'), for every caller", async () => {
    const { waiter, calls } = batchOf();
    const outcomes = Promise.allSettled(calls.map((call) => call.promise));
    waiter.onReply(Buffer.from(JSON.stringify({ replies: [entry('a')] })));
    for (const outcome of await outcomes) {
      expect(outcome).toMatchObject({
        status: 'fulfilled',
        value: { allowed: false, code: 'UNAVAILABLE', policy: true },
      });
    }
  });

  // The limiter's whole-message refusal (its shutdown deadline, an internal error) on a batch: an
  // acquire-like call resolves a limiter's answer, it never throws RequestRefusedError.
  it('answers each caller a refusal of its own when the limiter refuses the whole batch', async () => {
    const { waiter, calls } = batchOf();
    const outcomes = Promise.allSettled(calls.map((call) => call.promise));
    const shutdown = { ok: false, allowed: false, code: 'UNAVAILABLE', reason: 'shutting down' };
    waiter.onReply(Buffer.from(JSON.stringify(shutdown)));
    const [first, second] = await outcomes;
    for (const [outcome, key] of [
      [first, 'a'],
      [second, 'b'],
    ] as const) {
      expect(outcome).toMatchObject({
        status: 'fulfilled',
        value: { allowed: false, code: 'UNAVAILABLE', key, reason: 'shutting down', quota: '' },
      });
      expect((outcome as PromiseFulfilledResult<ClientAcquireReply>).value.policy).toBeUndefined();
    }
  });
});
