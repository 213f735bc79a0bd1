import { Logger } from '@nestjs/common';
import { jsonLines, memoryDestination } from './test-destination.test-util';
import { flushThrottledLogs, THROTTLED_LINES_PER_SECOND, ThrottledLog } from './throttled-log';
import { useLogger } from './use-logger';

beforeEach(() => jest.useFakeTimers({ now: 5_000_000 }));
afterEach(() => {
  jest.useRealTimers();
  Logger.overrideLogger(false);
});

describe('ThrottledLog', () => {
  it('writes THROTTLED_LINES_PER_SECOND lines a second with their kind, then one count line', () => {
    const out = memoryDestination();
    useLogger('limiter', { logLevel: 'info', logFormat: 'json' }, out);
    const log = new ThrottledLog('LimiterHttp', 'http.invalid', 'warn');
    let built = 0;
    for (let i = 0; i < 500; i++) {
      log.write(() => {
        built++;
        return { msg: `bad ${i}`, correlationId: `c-${i}` };
      });
    }
    jest.advanceTimersByTime(1_000);
    const lines = jsonLines(out);
    expect(built).toBe(THROTTLED_LINES_PER_SECOND); // a suppressed line is not even built
    expect(lines).toHaveLength(THROTTLED_LINES_PER_SECOND + 1);
    expect(lines[0]).toMatchObject({
      level: 'warn',
      context: 'LimiterHttp',
      kind: 'http.invalid',
      msg: 'bad 0',
      correlationId: 'c-0',
    });
    expect(lines.at(-1)).toMatchObject({
      level: 'warn',
      kind: 'http.invalid',
      suppressed: 500 - THROTTLED_LINES_PER_SECOND,
      msg: `${500 - THROTTLED_LINES_PER_SECOND} more http.invalid lines suppressed (at most ${THROTTLED_LINES_PER_SECOND} a second)`,
    });
  });

  it('keeps a budget per kind, and flushThrottledLogs writes the counts still pending', () => {
    const out = memoryDestination();
    useLogger('limiter', { logLevel: 'info', logFormat: 'json' }, out);
    const invalid = new ThrottledLog('NatsRequests', 'nats.invalid', 'warn', 1);
    const failed = new ThrottledLog('NatsResponder', 'nats.error', 'error', 1);
    for (let i = 0; i < 3; i++) {
      invalid.write(() => ({ msg: 'invalid' }));
      failed.write(() => ({ msg: 'failed' }));
    }
    flushThrottledLogs();
    expect(jsonLines(out).map((l) => [l['kind'], l['level'], l['suppressed']])).toEqual([
      ['nats.invalid', 'warn', undefined],
      ['nats.error', 'error', undefined],
      ['nats.invalid', 'warn', 2],
      ['nats.error', 'error', 2],
    ]);
  });
});
