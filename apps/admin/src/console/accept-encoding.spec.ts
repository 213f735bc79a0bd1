import { acceptsGzip } from './accept-encoding';

describe('acceptsGzip', () => {
  it.each([
    ['gzip, deflate, br', true],
    ['br;q=1.0, GZIP;q=0.5', true],
    ['*', true],
    ['deflate, br', false],
    ['gzip;q=0', false],
    ['gzip; q=0.0, br', false],
    ['identity', false],
    ['', false],
    [undefined, false],
  ])('%s -> %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});
