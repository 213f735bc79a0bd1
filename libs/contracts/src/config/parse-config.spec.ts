import { GOCC_DEFAULTS } from './gocc-default';
import { CONTRACT_CONFIG_EXAMPLE } from './contract-example.test-util';
import { parseConfigFile } from './parse-config';

const contractExample = `\n${CONTRACT_CONFIG_EXAMPLE}`;

const apiQuota = {
  name: 'api',
  match: 'api-*',
  limits: [
    { name: 'rps', unit: 'requests', limit: 10, windowMs: 1000, algorithm: 'fixed_window' },
    { name: 'tpm', unit: 'tokens', limit: 40000, windowMs: 60_000, algorithm: 'sliding_window' },
  ],
  queue: { maxSize: 100, maxWaitMs: 5000 },
  concurrency: { max: 5, leaseTtlMs: 60000 },
  scope: 'cluster',
  onStoreFailure: 'local',
};

describe('config file: this project format', () => {
  it('reads the example of docs/contract.md, Config file', () => {
    expect(parseConfigFile(contractExample)).toEqual({
      format: 'native',
      quotas: [
        {
          name: 'default',
          limits: [
            {
              name: 'rps',
              unit: 'requests',
              limit: 100,
              windowMs: 1000,
              algorithm: 'fixed_window',
            },
          ],
          queue: { maxSize: 400, maxWaitMs: 30000 },
          clientOverrides: true,
        },
        apiQuota,
      ],
      providers: ['openai', 'anthropic'],
    });
  });

  it('reads the same config written as JSON', () => {
    const json = JSON.stringify(
      {
        quotas: [
          {
            name: 'api',
            match: 'api-*',
            limits: [
              {
                name: 'rps',
                unit: 'requests',
                limit: 10,
                windowMs: 1000,
                algorithm: 'fixed_window',
              },
              {
                name: 'tpm',
                unit: 'tokens',
                limit: 40000,
                window: '1m',
                algorithm: 'sliding_window',
              },
            ],
            queue: { maxSize: 100, maxWaitMs: 5000 },
            concurrency: { max: 5, leaseTtlMs: 60000 },
            scope: 'cluster',
            onStoreFailure: 'local',
          },
        ],
      },
      null,
      '\t',
    );
    const config = parseConfigFile(json);
    expect(config.quotas[1]).toEqual(apiQuota);
    expect(config.providers).toEqual([]);
  });

  it('overrides only the fields `defaults` gives, keeping the rest from the environment', () => {
    const config = parseConfigFile('defaults:\n  queue: { maxSize: 0 }\n  shadow: true\n', {
      gocc: { ...GOCC_DEFAULTS, maxRequests: 7 },
    });
    expect(config.quotas).toEqual([
      {
        name: 'default',
        limits: [
          { name: 'rps', unit: 'requests', limit: 7, windowMs: 1000, algorithm: 'fixed_window' },
        ],
        queue: { maxSize: 0, maxWaitMs: 30_000 },
        clientOverrides: true,
        shadow: true,
      },
    ]);
  });

  it('reads lease: off or auto in a quota and in defaults, and leaves it out when absent', () => {
    const config = parseConfigFile(
      'defaults:\n  lease: off\nquotas:\n  - name: a\n    lease: auto\n  - name: b\n',
    );
    expect(config.quotas.map((q) => [q.name, q.lease])).toEqual([
      ['default', 'off'],
      ['a', 'auto'],
      ['b', undefined],
    ]);
    expect('lease' in config.quotas[2]!).toBe(false);
  });

  it('lets a quota opt in to client overrides; only the GoCC default quota has them unasked', () => {
    const config = parseConfigFile(
      'quotas:\n  - name: a\n    clientOverrides: true\n  - name: b\n  - name: c\n    clientOverrides: false\n',
    );
    expect(config.quotas.map((q) => [q.name, q.clientOverrides])).toEqual([
      ['default', true],
      ['a', true],
      ['b', undefined],
      ['c', false],
    ]);
    const off = parseConfigFile('defaults:\n  clientOverrides: false\n');
    expect(off.quotas[0]).toMatchObject({ name: 'default', clientOverrides: false });
    const listed = parseConfigFile('quotas:\n  - name: default\n    limits: []\n');
    expect(listed.quotas[0]?.clientOverrides).toBeUndefined();
  });

  it('takes a complete quota named default in place of the built-in one', () => {
    const config = parseConfigFile(
      'quotas:\n  - name: default\n    limits: [{ name: rpm, limit: 60, window: 1m }]\n  - name: other\n',
    );
    expect(config.quotas).toEqual([
      {
        name: 'default',
        limits: [
          { name: 'rpm', unit: 'requests', limit: 60, windowMs: 60_000, algorithm: 'fixed_window' },
        ],
      },
      { name: 'other', limits: [] },
    ]);
  });

  it('fills the documented defaults of optional fields', () => {
    const config = parseConfigFile(`
quotas:
  - name: llm
    match: "re:^(gpt|claude)-"
    limits:
      - { name: tpd, unit: tokens, limit: 0, window: 1d, align: calendar, timezone: Europe/Stockholm }
      - { name: burst, limit: 10, windowMs: 1000, algorithm: token_bucket, burst: 20 }
      - { name: smooth, limit: 10, window: 10s, algorithm: sliding_window, precision: 50 }
    queue: { maxSize: 3 }
    concurrency: { max: 2 }
`);
    expect(config.quotas[1]).toEqual({
      name: 'llm',
      match: 're:^(gpt|claude)-',
      limits: [
        {
          name: 'tpd',
          unit: 'tokens',
          limit: 0,
          windowMs: 86_400_000,
          algorithm: 'fixed_window',
          align: 'calendar',
          timezone: 'Europe/Stockholm',
        },
        {
          name: 'burst',
          unit: 'requests',
          limit: 10,
          windowMs: 1000,
          algorithm: 'token_bucket',
          burst: 20,
        },
        {
          name: 'smooth',
          unit: 'requests',
          limit: 10,
          windowMs: 10_000,
          algorithm: 'sliding_window',
          precision: 50,
        },
      ],
      queue: { maxSize: 3, maxWaitMs: 30_000 },
      concurrency: { max: 2, leaseTtlMs: 60_000 },
    });
  });

  it('accepts an empty quota list and lists each provider once', () => {
    expect(parseConfigFile('quotas: []\nproviders: [gemini, gemini, my-llm]')).toMatchObject({
      quotas: [{ name: 'default' }],
      providers: ['gemini', 'my-llm'],
    });
    expect(parseConfigFile('{}').quotas.map((quota) => quota.name)).toEqual(['default']);
  });
});
