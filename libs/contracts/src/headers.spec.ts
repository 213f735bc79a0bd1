import { rateLimitHeaders, secondsRoundedUp, usableCorrelationId } from './headers';
import { API_ROUTES, GOCC_ROUTES, HEADERS, OPERATIONS_ROUTES } from './routes';

describe('rate-limit headers', () => {
  it('describes an admitted request without Retry-After', () => {
    const headers = rateLimitHeaders({
      allowed: true,
      limit: 100,
      remaining: 37,
      resetMs: 420,
      retryAfterMs: 0,
    });
    expect(headers).toEqual({
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '37',
      'RateLimit-Reset': '1',
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '37',
      'X-RateLimit-Reset': '1',
    });
  });

  it('adds Retry-After in whole seconds, rounded up, when refused', () => {
    const headers = rateLimitHeaders({
      allowed: false,
      limit: 10,
      remaining: 0,
      resetMs: 2001,
      retryAfterMs: 1001,
    });
    expect(headers['RateLimit-Reset']).toBe('3');
    expect(headers['Retry-After']).toBe('2');
    expect(headers['X-RateLimit-Retry-After']).toBe('2');
  });

  it('never advertises a Retry-After below 1 second', () => {
    const headers = rateLimitHeaders({
      allowed: false,
      limit: 10,
      remaining: 0,
      resetMs: 0,
      retryAfterMs: 0,
    });
    expect(headers['Retry-After']).toBe('1');
  });

  it('rounds milliseconds up to seconds', () => {
    expect([0, 1, 999, 1000, 1001, -5].map(secondsRoundedUp)).toEqual([0, 1, 1, 1, 2, 0]);
  });
});

describe('routes', () => {
  it('match docs/contract.md, HTTP', () => {
    expect(GOCC_ROUTES).toEqual({
      rate: '/rate/:key',
      release: '/rate/:key/:requestId',
      debug: '/debug/:key',
      debugList: '/debug',
    });
    expect(Object.values(API_ROUTES)).toEqual([
      '/v1/acquire',
      '/v1/acquire/batch',
      '/v1/decide',
      '/v1/release',
      '/v1/usage',
      '/v1/stats/:key',
    ]);
    expect(OPERATIONS_ROUTES).toEqual({
      health: '/healthz',
      ready: '/readyz',
      metrics: '/metrics',
    });
    expect(HEADERS.correlationId).toBe('X-Correlation-ID');
  });
});

describe('usableCorrelationId', () => {
  it('takes 1..128 printable ASCII characters, not starting with a space', () => {
    expect(usableCorrelationId('req-1 a/b')).toBe('req-1 a/b');
    expect(usableCorrelationId('x'.repeat(128))).toBe('x'.repeat(128));
  });

  it.each([undefined, 7, '', ' lead', 'x'.repeat(129), 'tab\there', 'é', 'line\nbreak'])(
    'refuses %p',
    (value) => {
      expect(usableCorrelationId(value)).toBeUndefined();
    },
  );
});
