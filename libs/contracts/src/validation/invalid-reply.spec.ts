import { TypeCompiler } from '@sinclair/typebox/compiler';
import { AcquireReplySchema } from '../messages/acquire';
import { ErrorReplySchema } from '../messages/error-reply';
import { invalidAcquireReply, invalidRequestReply } from './invalid-reply';
import { parseAcquire } from './parse-acquire';
import { parseUsage } from './parse-usage';

const isAcquireReply = TypeCompiler.Compile(AcquireReplySchema);
const isErrorReply = TypeCompiler.Compile(ErrorReplySchema);

describe('replies to invalid input', () => {
  it('answers an AcquireReply with INVALID_REQUEST, echoing the usable fields', () => {
    const raw = { key: 'user-1', quota: 'api', requestId: 'r-1', cost: -1 };
    const failure = parseAcquire(raw);
    if (failure.ok) throw new Error('expected a failure');
    const reply = invalidAcquireReply(failure, raw);
    expect(reply).toEqual({
      allowed: false,
      code: 'INVALID_REQUEST',
      requestId: 'r-1',
      key: 'user-1',
      quota: 'api',
      limit: 0,
      remaining: 0,
      resetMs: 0,
      retryAfterMs: 0,
      waitedMs: 0,
      limitName: '',
      shadow: false,
      reason: 'cost: must be an integer >= 0',
    });
    expect(isAcquireReply.Check(reply)).toBe(true);
  });

  it('does not echo fields that are themselves bad', () => {
    const raw = { key: 5, quota: 'a b', requestId: 'r'.repeat(500) };
    const failure = parseAcquire(raw);
    if (failure.ok) throw new Error('expected a failure');
    const reply = invalidAcquireReply(failure, raw);
    expect([reply.key, reply.quota, reply.requestId]).toEqual(['', '', '']);
    expect(invalidAcquireReply(failure, 'not an object').key).toBe('');
  });

  it('answers release, usage and stats with an ErrorReply naming the field', () => {
    const failure = parseUsage({ key: 'k' });
    if (failure.ok) throw new Error('expected a failure');
    const reply = invalidRequestReply(failure);
    expect(reply).toMatchObject({
      ok: false,
      allowed: false,
      code: 'INVALID_REQUEST',
      field: 'cost',
    });
    expect(isErrorReply.Check(reply)).toBe(true);
  });
});
