import { parseGoccRateQuery } from './gocc-query';

describe('GoCC /rate query', () => {
  it('defaults to not waiting and no overrides', () => {
    expect(parseGoccRateQuery({})).toEqual({ ok: true, value: { canWait: false } });
  });

  it.each([
    ['true', true],
    ['1', true],
    ['T', true],
    ['False', false],
    ['0', false],
  ])('reads canWait=%s as Go does', (text, canWait) => {
    expect(parseGoccRateQuery({ canWait: text })).toEqual({ ok: true, value: { canWait } });
  });

  it('reads the overrides as integers', () => {
    expect(
      parseGoccRateQuery({ canWait: 'true', maxRequests: '10', maxRequestsInQueue: '0' }),
    ).toEqual({ ok: true, value: { canWait: true, maxRequests: 10, maxRequestsInQueue: 0 } });
  });

  it('takes the ends of the override ranges', () => {
    expect(parseGoccRateQuery({ maxRequests: '1', maxRequestsInQueue: '1000000000' })).toEqual({
      ok: true,
      value: { canWait: false, maxRequests: 1, maxRequestsInQueue: 1_000_000_000 },
    });
    expect(parseGoccRateQuery({ maxRequests: '1000000000' })).toMatchObject({ ok: true });
  });

  it.each<[Record<string, string | string[]>, string]>([
    [{ maxRequests: '0' }, 'maxRequests'],
    [{ maxRequests: '1000000001' }, 'maxRequests'],
    [{ maxRequests: '999999999999999' }, 'maxRequests'],
    [{ maxRequestsInQueue: '-1' }, 'maxRequestsInQueue'],
    [{ maxRequestsInQueue: '1000000001' }, 'maxRequestsInQueue'],
    [{ canWait: 'yes' }, 'canWait'],
    [{ canWait: '' }, 'canWait'],
    [{ canWait: ['true', 'false'] }, 'canWait'],
    [{ maxRequests: '-1' }, 'maxRequests'],
    [{ maxRequests: '1.5' }, 'maxRequests'],
    [{ maxRequests: 'ten' }, 'maxRequests'],
    [{ maxRequestsInQueue: '1e3' }, 'maxRequestsInQueue'],
    [{ maxRequestsInQueue: '' }, 'maxRequestsInQueue'],
  ])('refuses %j at %s', (query, field) => {
    const result = parseGoccRateQuery(query);
    expect(result).toMatchObject({ ok: false, field });
    expect(!result.ok && result.reason.startsWith(`${field}: `)).toBe(true);
  });
});
