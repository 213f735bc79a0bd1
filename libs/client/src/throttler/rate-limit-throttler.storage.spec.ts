import type { AcquireReply } from '@app/contracts';
import { toThrottlerRecord } from './rate-limit-throttler.storage';

function reply(fields: Partial<AcquireReply>): AcquireReply {
  return {
    allowed: true,
    code: 'OK',
    requestId: 'r',
    key: 'k',
    quota: 'q',
    limit: 10,
    remaining: 7,
    resetMs: 1500,
    retryAfterMs: 0,
    waitedMs: 0,
    limitName: 'rps',
    shadow: false,
    ...fields,
  };
}

describe('toThrottlerRecord', () => {
  it('counts the hits the window used, and its reset in whole seconds rounded up', () => {
    expect(toThrottlerRecord(reply({}))).toEqual({
      totalHits: 3,
      timeToExpire: 2,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  it('blocks a refusal for its Retry-After in whole seconds, over the limit by one', () => {
    const refused = reply({
      allowed: false,
      code: 'RATE_LIMITED',
      remaining: 0,
      retryAfterMs: 2001,
    });
    expect(toThrottlerRecord(refused)).toEqual({
      totalHits: 11,
      timeToExpire: 2,
      isBlocked: true,
      timeToBlockExpire: 3,
    });
  });

  it('blocks for at least a second, so that a refusal never says "retry now"', () => {
    const closed = reply({
      allowed: false,
      code: 'UNAVAILABLE',
      limit: 0,
      remaining: 0,
      resetMs: 0,
    });
    expect(toThrottlerRecord(closed)).toMatchObject({ isBlocked: true, timeToBlockExpire: 1 });
  });

  it('lets an admission the failure policy made through with no hits', () => {
    const open = reply({ limit: 0, remaining: 0, resetMs: 0 });
    expect(toThrottlerRecord(open)).toEqual({
      totalHits: 0,
      timeToExpire: 0,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });
});
