import { goccQuotaName } from './gocc-config';
import { GOCC_DEFAULTS } from './gocc-default';
import { parseConfigFile } from './parse-config';

const goccDocsExample = `{
  "keys": [
    {
      "key_pattern": "^premium-.*",
      "key_pattern_is_regex": true,
      "max_requests_per_window": 1000,
      "max_requests_in_queue": 500,
      "window_millis": 1000
    },
    {
      "key_pattern": "guest",
      "key_pattern_is_regex": false,
      "max_requests_per_window": 10,
      "max_requests_in_queue": 5,
      "window_millis": 60000
    }
  ]
}`;

describe('config file: GoCC format', () => {
  it('maps each key to a fixed-window quota with a queue', () => {
    const config = parseConfigFile(goccDocsExample);
    expect(config.format).toBe('gocc');
    expect(config.providers).toEqual([]);
    expect(config.quotas).toEqual([
      {
        name: 'default',
        limits: [
          { name: 'rps', unit: 'requests', limit: 100, windowMs: 1000, algorithm: 'fixed_window' },
        ],
        queue: { maxSize: 400, maxWaitMs: 30_000 },
        clientOverrides: true,
      },
      {
        name: goccQuotaName('^premium-.*', true),
        match: 're:^premium-.*',
        limits: [
          { name: 'rps', unit: 'requests', limit: 1000, windowMs: 1000, algorithm: 'fixed_window' },
        ],
        queue: { maxSize: 500, maxWaitMs: 30_000 },
        clientOverrides: true,
        merge: {
          maxRequests: goccQuotaName('^premium-.*', true),
          maxRequestsInQueue: goccQuotaName('^premium-.*', true),
          windowMillis: goccQuotaName('^premium-.*', true),
        },
      },
      {
        name: 'gocc:guest',
        match: 'guest',
        limits: [
          { name: 'rpm', unit: 'requests', limit: 10, windowMs: 60_000, algorithm: 'fixed_window' },
        ],
        queue: { maxSize: 5, maxWaitMs: 120_000 },
        clientOverrides: true,
      },
    ]);
  });

  it('takes missing and zero numbers from the environment settings, like GoCC', () => {
    const gocc = { maxRequests: 3, maxRequestsInQueue: 4, windowMillis: 2000 };
    const config = parseConfigFile(
      '{"keys":[{"key_pattern":"a"},{"key_pattern":"b","max_requests_per_window":0,"extra":1}]}',
      { gocc },
    );
    for (const quota of config.quotas) {
      expect(quota.limits[0]).toMatchObject({ limit: 3, windowMs: 2000, name: 'per_2s' });
      expect(quota.queue?.maxSize).toBe(4);
    }
  });

  it('matches literal keys exactly, escaping glob and regex syntax', () => {
    const config = parseConfigFile('{"keys":[{"key_pattern":"a*b"},{"key_pattern":"re:x"}]}');
    expect(config.quotas.slice(1).map((quota) => quota.match)).toEqual(['re:^a\\*b$', 're:^re:x$']);
  });

  it('gives names that survive reordering and never clash between kinds', () => {
    expect(goccQuotaName('guest', false)).toBe('gocc:guest');
    expect(goccQuotaName('guest', true)).toBe('gocc:re:guest');
    expect(goccQuotaName('^a.*$', true)).toMatch(/^gocc:re:fnv-[0-9a-f]{8}$/);
    expect(goccQuotaName('^a.*$', true)).toBe(goccQuotaName('^a.*$', true));
    expect(goccQuotaName('^a.*$', true)).not.toBe(goccQuotaName('^b.*$', true));
  });

  it('uses GOCC_DEFAULTS when no settings are passed', () => {
    const config = parseConfigFile('{"keys": []}');
    expect(config.quotas).toHaveLength(1);
    expect(config.quotas[0]?.limits[0]?.limit).toBe(GOCC_DEFAULTS.maxRequests);
  });
});
