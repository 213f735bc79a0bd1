import { httpStatusForCode, isReplyCode, REPLY_CODES, type ReplyCode } from './codes';

describe('reply codes', () => {
  it('lists the nine codes of the contract, in its order', () => {
    expect(REPLY_CODES).toEqual([
      'OK',
      'RATE_LIMITED',
      'QUEUE_FULL',
      'WAIT_TIMEOUT',
      'CONCURRENCY_LIMITED',
      'COST_EXCEEDS_LIMIT',
      'UNKNOWN_QUOTA',
      'INVALID_REQUEST',
      'UNAVAILABLE',
    ]);
  });

  it.each<[ReplyCode, number]>([
    ['OK', 200],
    ['RATE_LIMITED', 429],
    ['QUEUE_FULL', 429],
    ['WAIT_TIMEOUT', 429],
    ['CONCURRENCY_LIMITED', 429],
    ['COST_EXCEEDS_LIMIT', 429],
    ['INVALID_REQUEST', 400],
    ['UNKNOWN_QUOTA', 404],
    ['UNAVAILABLE', 503],
  ])('%s answers HTTP %d', (code, status) => {
    expect(httpStatusForCode(code)).toBe(status);
  });

  it('recognises codes and nothing else', () => {
    expect(isReplyCode('QUEUE_FULL')).toBe(true);
    expect(isReplyCode('queue_full')).toBe(false);
    expect(isReplyCode(429)).toBe(false);
    expect(isReplyCode('toString')).toBe(false);
  });
});
