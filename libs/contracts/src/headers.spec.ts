import {
  rateLimitHeaderList,
  rateLimitHeaders,
  secondsRoundedUp,
  sfString,
  usableCorrelationId,
  type HeaderLimitShape,
  type HeaderSource,
  type RateLimitHeaderMode,
} from './headers';
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

const ADMITTED: HeaderSource = {
  allowed: true,
  limit: 100,
  remaining: 42,
  resetMs: 16_001,
  retryAfterMs: 0,
  limitName: 'rpm',
};
const REFUSED: HeaderSource = {
  allowed: false,
  limit: 100,
  remaining: 0,
  resetMs: 17_000,
  retryAfterMs: 2_500,
  limitName: 'rpm',
};
const RPM: readonly HeaderLimitShape[] = [{ name: 'rpm', windowMs: 60_000 }];
/** A quota of two limits: the headers describe the one the reply names, whatever its place. */
const TWO_LIMITS: readonly HeaderLimitShape[] = [
  { name: 'per-second', windowMs: 1_000 },
  { name: 'per-day', windowMs: 86_400_000 },
];

describe('rate-limit headers by mode', () => {
  it.each<
    [
      string,
      HeaderSource,
      RateLimitHeaderMode,
      readonly HeaderLimitShape[] | undefined,
      Record<string, string>,
    ]
  >([
    [
      'draft, admitted',
      ADMITTED,
      'draft',
      RPM,
      { 'RateLimit-Policy': '"rpm";q=100;w=60', RateLimit: '"rpm";r=42;t=17' },
    ],
    [
      'draft, refused: zero remaining, Retry-After but no X-RateLimit-Retry-After',
      REFUSED,
      'draft',
      RPM,
      { 'RateLimit-Policy': '"rpm";q=100;w=60', RateLimit: '"rpm";r=0;t=17', 'Retry-After': '3' },
    ],
    [
      'both, refused: every header',
      REFUSED,
      'both',
      RPM,
      {
        'RateLimit-Limit': '100',
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': '17',
        'X-RateLimit-Limit': '100',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '17',
        'RateLimit-Policy': '"rpm";q=100;w=60',
        RateLimit: '"rpm";r=0;t=17',
        'Retry-After': '3',
        'X-RateLimit-Retry-After': '3',
      },
    ],
    [
      'legacy, refused: as before, no draft fields',
      REFUSED,
      'legacy',
      RPM,
      {
        'RateLimit-Limit': '100',
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': '17',
        'X-RateLimit-Limit': '100',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '17',
        'Retry-After': '3',
        'X-RateLimit-Retry-After': '3',
      },
    ],
    [
      'a quota of two limits, the second binding',
      { ...ADMITTED, limit: 5000, remaining: 12, resetMs: 3_600_000, limitName: 'per-day' },
      'draft',
      TWO_LIMITS,
      { 'RateLimit-Policy': '"per-day";q=5000;w=86400', RateLimit: '"per-day";r=12;t=3600' },
    ],
    [
      'a quota of two limits, the first binding',
      { ...ADMITTED, limit: 10, remaining: 3, resetMs: 400, limitName: 'per-second' },
      'draft',
      TWO_LIMITS,
      { 'RateLimit-Policy': '"per-second";q=10;w=1', RateLimit: '"per-second";r=3;t=1' },
    ],
    [
      "limits that do not name the reply's: no w",
      ADMITTED,
      'draft',
      TWO_LIMITS,
      { 'RateLimit-Policy': '"rpm";q=100', RateLimit: '"rpm";r=42;t=17' },
    ],
    [
      'no limits known (the NestJS guard): no w',
      ADMITTED,
      'draft',
      undefined,
      { 'RateLimit-Policy': '"rpm";q=100', RateLimit: '"rpm";r=42;t=17' },
    ],
    [
      'a window of no whole seconds: no w (the draft has no sub-second precision)',
      ADMITTED,
      'draft',
      [{ name: 'rpm', windowMs: 1_500 }],
      { 'RateLimit-Policy': '"rpm";q=100', RateLimit: '"rpm";r=42;t=17' },
    ],
    [
      'a window under a second: no w (w must not be 0)',
      ADMITTED,
      'draft',
      [{ name: 'rpm', windowMs: 250 }],
      { 'RateLimit-Policy': '"rpm";q=100', RateLimit: '"rpm";r=42;t=17' },
    ],
    [
      'a name with a quote and a backslash, escaped',
      { ...ADMITTED, limitName: 'a"b\\c d' },
      'draft',
      [{ name: 'a"b\\c d', windowMs: 2_000 }],
      {
        'RateLimit-Policy': '"a\\"b\\\\c d";q=100;w=2',
        RateLimit: '"a\\"b\\\\c d";r=42;t=17',
      },
    ],
    [
      'a name no String can carry: no draft fields',
      { ...ADMITTED, limitName: 'débit' },
      'draft',
      [{ name: 'débit', windowMs: 60_000 }],
      {},
    ],
    [
      'no limit named (a quota of no limits): no draft fields, the legacy ones still',
      { ...ADMITTED, limit: 0, remaining: 0, resetMs: 0, limitName: '' },
      'both',
      undefined,
      {
        'RateLimit-Limit': '0',
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': '0',
        'X-RateLimit-Limit': '0',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '0',
      },
    ],
    [
      'numbers beyond a Structured Field Integer: clamped to 15 digits',
      { ...ADMITTED, limit: 2 ** 53, remaining: 2 ** 52, resetMs: 0 },
      'draft',
      RPM,
      {
        'RateLimit-Policy': '"rpm";q=999999999999999;w=60',
        RateLimit: '"rpm";r=999999999999999;t=0',
      },
    ],
  ])('%s', (_, reply, mode, limits, expected) => {
    expect(rateLimitHeaders(reply, mode, limits)).toEqual(expected);
  });

  it('keeps the legacy list, in order, when no mode is given', () => {
    expect(rateLimitHeaderList(REFUSED)).toEqual(rateLimitHeaderList(REFUSED, 'legacy', RPM));
    expect(rateLimitHeaderList(REFUSED)).toEqual([
      'RateLimit-Limit',
      '100',
      'RateLimit-Remaining',
      '0',
      'RateLimit-Reset',
      '17',
      'X-RateLimit-Limit',
      '100',
      'X-RateLimit-Remaining',
      '0',
      'X-RateLimit-Reset',
      '17',
      'Retry-After',
      '3',
      'X-RateLimit-Retry-After',
      '3',
    ]);
  });
});

describe('sfString', () => {
  it.each([
    ['rpm', '"rpm"'],
    ['a b', '"a b"'],
    ['say "hi"', '"say \\"hi\\""'],
    ['back\\slash', '"back\\\\slash"'],
    ['', undefined],
    ['tab\there', undefined],
    ['ü', undefined],
  ])('%p → %p', (text, expected) => {
    expect(sfString(text)).toBe(expected);
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
