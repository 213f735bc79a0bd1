/**
 * Replies the limiter builds for refused input (the contract's own builders) become the typed
 * errors the client promises; the client's own checks normally catch such input before it goes.
 */
import { invalidAcquireReply, invalidRequestReply, parseAcquire, parseUsage } from '@app/contracts';
import { InvalidRequestError, RequestRefusedError } from './errors';
import { parseReleaseReply } from '@app/contracts/validation/parse-reply';
import { acquireResult, operationReply, unnestBatchReason } from './replies';

function failure<T>(result: { ok: true; value: T } | { ok: false; field: string; reason: string }) {
  if (result.ok) throw new Error('expected a failure');
  return result;
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('reply mapping', () => {
  it('an acquire reply INVALID_REQUEST throws InvalidRequestError naming the field', () => {
    const bad = { key: 'k', cost: { tokens: -1 } };
    const reply = invalidAcquireReply(failure(parseAcquire(bad)), bad);
    expect(() => acquireResult(reply)).toThrow(InvalidRequestError);
    expect(thrown(() => acquireResult(reply))).toMatchObject({ field: 'cost.tokens' });
  });

  it('a batch entry refused as requests[i].field is named as the single acquire it was', () => {
    const bad = { key: 'k', cost: { tokens: -1 } };
    const nested = failure(parseAcquire(bad));
    const reply = invalidAcquireReply(
      { ok: false, field: 'requests[3].cost.tokens', reason: `requests[3].${nested.reason}` },
      bad,
    );
    expect(thrown(() => acquireResult(unnestBatchReason(reply, 3)))).toMatchObject({
      field: 'cost.tokens',
      reason: nested.reason,
    });
  });

  it('an ErrorReply throws InvalidRequestError or RequestRefusedError; other replies pass', () => {
    const operationResult = (reply: unknown): unknown => operationReply(reply, parseReleaseReply);
    const invalid = invalidRequestReply(failure(parseUsage({ key: 'k' })));
    expect(thrown(() => operationResult(invalid))).toMatchObject({ field: 'cost' });
    expect(() => operationResult(invalid)).toThrow(InvalidRequestError);
    const unknown = {
      ok: false,
      allowed: false,
      code: 'UNKNOWN_QUOTA',
      reason: 'quota: x',
      field: 'quota',
    };
    expect(() => operationResult(unknown)).toThrow(RequestRefusedError);
    expect(operationResult({ released: true })).toEqual({ released: true });
  });
});
