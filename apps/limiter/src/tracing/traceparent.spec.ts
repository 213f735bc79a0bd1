import { parseTraceparent } from './traceparent';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';

describe('parseTraceparent (W3C Trace Context)', () => {
  it('takes a version 00 header, sampled or not', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      traceFlags: 1,
    });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.traceFlags).toBe(0);
  });

  it('takes a later version, with fields of its own after the flags', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-extra`)?.traceId).toBe(TRACE);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['extra fields on version 00', `00-${TRACE}-${SPAN}-01-extra`],
  ])('names no parent when %s', (_, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });
});
