import { ADMITTED_REPLY, KEY_STATS } from '../messages/replies.test-util';
import { invalidAcquireReply, invalidRequestReply } from './invalid-reply';
import { fieldFailure } from './parse-result';
import {
  parseAcquireReply,
  parseBatchReply,
  parseErrorReply,
  parseKeyStatsReply,
  parseReleaseReply,
  parseUsageReply,
} from './parse-reply';

const admitted = ADMITTED_REPLY;
const stats = KEY_STATS;

describe('reply checks', () => {
  it("take the limiter's own replies", () => {
    const refusedInput = invalidAcquireReply(fieldFailure('key', 'is required'), {});
    const shadow = { ...admitted, shadow: true, reason: 'shadow: would be RATE_LIMITED' };
    const limited = { ...admitted, allowed: false, code: 'RATE_LIMITED', retryAfterMs: 9 };
    for (const reply of [admitted, shadow, limited, refusedInput]) {
      expect(parseAcquireReply(reply)).toEqual({ ok: true, value: reply });
    }
    expect(parseBatchReply({ replies: [admitted, limited] }, 2).ok).toBe(true);
    expect(parseErrorReply(invalidRequestReply(fieldFailure('cost', 'is required'))).ok).toBe(true);
    expect(parseReleaseReply({ released: false }).ok).toBe(true);
    expect(parseUsageReply({ ok: true, usage: stats }).ok).toBe(true);
    expect(parseKeyStatsReply(stats).ok).toBe(true);
  });

  it.each<[string, () => unknown, string]>([
    ['allowed as a string', () => parseAcquireReply({ ...admitted, allowed: 'false' }), 'allowed'],
    [
      'allowed on a refusal',
      () => parseAcquireReply({ ...admitted, code: 'QUEUE_FULL' }),
      'allowed',
    ],
    ['refused on OK', () => parseAcquireReply({ ...admitted, allowed: false }), 'allowed'],
    ['null', () => parseAcquireReply(null), 'body'],
    ['a short batch', () => parseBatchReply({ replies: [admitted] }, 2), 'replies'],
    ['a long batch', () => parseBatchReply({ replies: [admitted, admitted] }, 1), 'replies'],
    [
      'an incoherent entry',
      () => parseBatchReply({ replies: [admitted, { ...admitted, allowed: false }] }, 2),
      'replies[1].allowed',
    ],
    [
      'a batch entry of the wrong type',
      () => parseBatchReply({ replies: [admitted, { ...admitted, limit: '5' }] }, 2),
      'replies[1].limit',
    ],
    [
      'an ErrorReply with code OK',
      () => parseErrorReply({ ok: false, allowed: false, code: 'OK', reason: 'x' }),
      'code',
    ],
    ['released as a string', () => parseReleaseReply({ released: 'true' }), 'released'],
    ['usage without stats', () => parseUsageReply({ ok: true }), 'usage'],
    ['negative stats', () => parseKeyStatsReply({ ...stats, denied: -1 }), 'denied'],
  ])('refuse %s, naming the field', (_name, parse, field) => {
    expect(parse()).toMatchObject({ ok: false, field, reason: expect.stringMatching(/: ./) });
  });
});
