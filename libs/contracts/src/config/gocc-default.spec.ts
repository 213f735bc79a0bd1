import { compileQuota, MAX_QUEUE_WAIT_MS as MAX_ENGINE_QUEUE_WAIT_MS } from '@app/engine';
import { ConfigError } from './config-error';
import {
  DEFAULT_QUEUE_MAX_WAIT_MS,
  GOCC_DEFAULTS,
  MAX_QUEUE_WAIT_MS,
  goccDefaultQuota,
  goccQueueMaxWaitMs,
  readGoccSettings,
  requestsLimitName,
} from './gocc-default';

describe('the GoCC default quota', () => {
  it('is one fixed window of 100 requests per second with a queue of 400', () => {
    expect(goccDefaultQuota()).toEqual({
      name: 'default',
      limits: [
        { name: 'rps', unit: 'requests', limit: 100, windowMs: 1000, algorithm: 'fixed_window' },
      ],
      queue: { maxSize: 400, maxWaitMs: 30_000 },
      clientOverrides: true,
    });
  });

  it('follows the environment', () => {
    const settings = readGoccSettings({
      MAX_REQUESTS: '5',
      MAX_REQUESTS_IN_QUEUE: '10',
      WINDOW_MILLIS: '60000',
    });
    expect(settings).toEqual({ maxRequests: 5, maxRequestsInQueue: 10, windowMillis: 60_000 });
    expect(goccDefaultQuota(settings)).toEqual({
      name: 'default',
      limits: [
        { name: 'rpm', unit: 'requests', limit: 5, windowMs: 60_000, algorithm: 'fixed_window' },
      ],
      // Draining 10 waiters at 5 per minute takes 2 windows, plus the one in progress.
      queue: { maxSize: 10, maxWaitMs: 180_000 },
      clientOverrides: true,
    });
  });

  it('never waits longer than a day, however long a full queue takes to drain', () => {
    // A million waiters at one an hour would wait 114 years; a timer cannot even hold 25 days.
    const settings = { maxRequests: 1, maxRequestsInQueue: 1_000_000, windowMillis: 3_600_000 };
    expect(goccQueueMaxWaitMs(settings)).toBe(MAX_QUEUE_WAIT_MS);
    expect(MAX_QUEUE_WAIT_MS).toBe(MAX_ENGINE_QUEUE_WAIT_MS);
    expect(() => compileQuota(goccDefaultQuota(settings))).not.toThrow();
  });

  it('treats unset and empty variables as the defaults', () => {
    expect(readGoccSettings({})).toEqual(GOCC_DEFAULTS);
    expect(readGoccSettings({ MAX_REQUESTS: '', WINDOW_MILLIS: ' ' })).toEqual(GOCC_DEFAULTS);
  });

  it('allows MAX_REQUESTS=0, the contract spelling of unlimited', () => {
    expect(readGoccSettings({ MAX_REQUESTS: '0' }).maxRequests).toBe(0);
    expect(goccQueueMaxWaitMs({ ...GOCC_DEFAULTS, maxRequests: 0 })).toBe(
      DEFAULT_QUEUE_MAX_WAIT_MS,
    );
  });

  it('refuses bad variables, naming each one', () => {
    const read = () =>
      readGoccSettings({ MAX_REQUESTS: '-1', MAX_REQUESTS_IN_QUEUE: 'lots', WINDOW_MILLIS: '0' });
    expect(read).toThrow(ConfigError);
    try {
      read();
    } catch (error) {
      const issues = (error as ConfigError).issues.map((issue) => issue.path);
      expect(issues).toEqual(['MAX_REQUESTS', 'MAX_REQUESTS_IN_QUEUE', 'WINDOW_MILLIS']);
      expect((error as ConfigError).message).toMatch(/^environment: 3 problems/);
    }
  });

  it.each<[number, string]>([
    [1000, 'rps'],
    [60_000, 'rpm'],
    [3_600_000, 'rph'],
    [86_400_000, 'rpd'],
    [250, 'per_250ms'],
    [5000, 'per_5s'],
  ])('names a %d ms window %s', (windowMs, name) => {
    expect(requestsLimitName(windowMs)).toBe(name);
  });
});
