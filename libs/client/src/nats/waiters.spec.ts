import type { AcquireRequest } from '@app/contracts';
import { LimiterUnavailableError } from '../errors';
import type { ClientAcquireReply } from '../options';
import { PendingCall } from '../pending-call';
import { BatchWaiter } from './waiters';

const requests: AcquireRequest[] = [{ key: 'a' }, { key: 'b' }];

function batchOf(): { waiter: BatchWaiter; calls: PendingCall<ClientAcquireReply>[] } {
  const calls = requests.map(() => new PendingCall<ClientAcquireReply>());
  return { waiter: new BatchWaiter(calls, requests, 'closed'), calls };
}

describe('BatchWaiter', () => {
  // A reply that is JSON but not a BatchReply (a foreign responder on the subject, a proxy):
  // every caller must still get an answer, and the mux's callback must not throw.
  it.each([['{}'], ['{"replies":null}'], ['{"replies":"x"}'], ['null'], ['[]'], ['3']])(
    'fails every caller when the reply %s has no replies array',
    async (body) => {
      const { waiter, calls } = batchOf();
      const outcomes = Promise.allSettled(calls.map((call) => call.promise));
      expect(() => waiter.onReply(Buffer.from(body))).not.toThrow();
      for (const outcome of await outcomes) {
        expect(outcome).toMatchObject({ status: 'rejected' });
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(LimiterUnavailableError);
      }
    },
  );

  it('answers each caller its own entry, and a missing entry as unanswered', async () => {
    const { waiter, calls } = batchOf();
    const outcomes = Promise.allSettled(calls.map((call) => call.promise));
    const entry = { allowed: true, code: 'OK', key: 'a', requestId: 'r' };
    waiter.onReply(Buffer.from(JSON.stringify({ replies: [entry] })));
    const [first, second] = await outcomes;
    expect(first).toMatchObject({ status: 'fulfilled', value: { key: 'a', allowed: true } });
    expect((second as PromiseRejectedResult).reason).toBeInstanceOf(LimiterUnavailableError);
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
