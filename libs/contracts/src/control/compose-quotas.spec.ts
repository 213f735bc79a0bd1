import { parseConfigFile, type LimiterConfig } from '../config/parse-config';
import { DEFAULT_PROVIDER_QUEUE } from '../providers';
import type { QuotaSpec, Scope } from '../quota-spec';
import { composeQuotas } from './compose-quotas';
import type { ControlSet } from './control-entries';

const quota = (name: string, limit: number, match?: string): QuotaSpec => ({
  name,
  ...(match !== undefined && { match }),
  limits: [{ name: 'rps', unit: 'requests', limit, windowMs: 1000, algorithm: 'fixed_window' }],
});
const config = (quotas: QuotaSpec[], providers: string[] = []): LimiterConfig => ({
  format: 'native',
  quotas,
  providers,
});
const names = (quotas: QuotaSpec[]): string[] => quotas.map((q) => q.name);
const limitOf = (quotas: QuotaSpec[], name: string): number | undefined =>
  quotas.find((q) => q.name === name)?.limits[0]?.limit;

describe('composeQuotas', () => {
  it.each<[string, LimiterConfig, ControlSet | undefined, string[], Record<string, number>]>([
    ['config alone', config([quota('default', 100)]), undefined, ['default'], { default: 100 }],
    [
      'admin quota added',
      config([quota('default', 100)]),
      { quotas: [{ spec: quota('api', 10, 'api-*'), version: 1, updatedAt: 0 }], providers: [] },
      ['default', 'api'],
      { api: 10 },
    ],
    [
      'admin quota replaces the config quota of the same name',
      config([quota('default', 100), quota('api', 50, 'api-*')]),
      { quotas: [{ spec: quota('api', 10, 'api-*'), version: 3, updatedAt: 0 }], providers: [] },
      ['default', 'api'],
      { api: 10 },
    ],
    [
      'admin may override the default quota',
      config([quota('default', 100)]),
      { quotas: [{ spec: quota('default', 5), version: 1, updatedAt: 0 }], providers: [] },
      ['default'],
      { default: 5 },
    ],
  ])('%s', (_, cfg, control, expected, limits) => {
    const out = composeQuotas(cfg, control);
    expect(names(out)).toEqual(expected);
    for (const [name, limit] of Object.entries(limits)) expect(limitOf(out, name)).toBe(limit);
  });

  it("uses the config's providers until the admin publishes profiles, then the admin's", () => {
    const cfg = config([quota('default', 100)], ['anthropic']);
    expect(names(composeQuotas(cfg, undefined))).toEqual([
      'default',
      'claude-opus-4',
      'claude-sonnet-4',
      'claude-haiku-3.5',
    ]);
    const control: ControlSet = {
      quotas: [],
      providers: [
        { name: 'anthropic', enabled: false, models: [] },
        {
          name: 'openai',
          enabled: true,
          models: [{ model: 'gpt-4o', maxRpm: 3, maxTpm: 10, maxRpd: 0 }],
        },
      ],
    };
    const out = composeQuotas(cfg, control);
    expect(names(out)).toEqual(['default', 'gpt-4o']);
    expect(out[1]?.limits.map((l) => l.limit)).toEqual([3, 10, 0]);
  });

  it('lets a quota named like a model win over the model profile', () => {
    const control: ControlSet = {
      quotas: [{ spec: quota('gpt-4o', 7), version: 1, updatedAt: 0 }],
      providers: [
        {
          name: 'openai',
          enabled: true,
          models: [{ model: 'gpt-4o', maxRpm: 3, maxTpm: 10, maxRpd: 0 }],
        },
      ],
    };
    const out = composeQuotas(config([quota('default', 1)]), control);
    expect(names(out)).toEqual(['default', 'gpt-4o']);
    expect(limitOf(out, 'gpt-4o')).toBe(7);
  });
});

describe('composeQuotas with a model two providers list', () => {
  it('serves it once, from the provider first by name', () => {
    const model = (maxRpm: number) => [{ model: 'shared', maxRpm, maxTpm: 0, maxRpd: 0 }];
    const control: ControlSet = {
      quotas: [],
      providers: [
        { name: 'zeta', enabled: true, models: model(9) },
        { name: 'alpha', enabled: true, models: model(4) },
      ],
    };
    const out = composeQuotas(config([quota('default', 1)]), control);
    expect(names(out)).toEqual(['default', 'shared']);
    expect(limitOf(out, 'shared')).toBe(4);
  });
});

describe('composeQuotas without an admin: the config and its providers', () => {
  it('adds the model quotas of enabled providers after the file quotas', () => {
    const config = parseConfigFile('providers: [anthropic]');
    expect(composeQuotas(config, undefined).map((quota) => quota.name)).toEqual([
      'default',
      'claude-opus-4',
      'claude-sonnet-4',
      'claude-haiku-3.5',
    ]);
  });

  it('lets a quota of the file override a built-in model profile', () => {
    const config = parseConfigFile(
      'providers: [openai]\nquotas:\n  - name: gpt-4o\n    match: gpt-4o\n    limits: [{ name: rpm, limit: 5, window: 1m }]\n',
    );
    const quotas = composeQuotas(config, undefined).filter((quota) => quota.name === 'gpt-4o');
    expect(quotas).toHaveLength(1);
    expect(quotas[0]?.limits).toEqual([
      { name: 'rpm', unit: 'requests', limit: 5, windowMs: 60_000, algorithm: 'fixed_window' },
    ]);
  });
});

/** Model options with the default queue: only the scope varies. */
const models = (scope: Scope) => ({ scope, queue: DEFAULT_PROVIDER_QUEUE });

describe('composeQuotas: the scope of model quotas (PROVIDER_SCOPE)', () => {
  const withFile = parseConfigFile(
    'providers: [anthropic]\nquotas:\n  - name: api\n    limits: [{ name: rps, limit: 5, window: 1s }]\n',
  );
  const scopes = (quotas: QuotaSpec[]) => quotas.map((q) => [q.name, q.scope ?? 'local']);

  it('makes the models cluster scope when asked, and leaves the other quotas alone', () => {
    expect(scopes(composeQuotas(withFile, undefined, models('cluster')))).toEqual([
      ['default', 'local'],
      ['api', 'local'],
      ['claude-opus-4', 'cluster'],
      ['claude-sonnet-4', 'cluster'],
      ['claude-haiku-3.5', 'cluster'],
    ]);
  });

  it('keeps them local by default and when asked', () => {
    for (const quotas of [
      composeQuotas(withFile, undefined),
      composeQuotas(withFile, undefined, models('local')),
    ]) {
      expect(quotas.every((q) => q.scope === undefined)).toBe(true);
    }
  });

  it('applies to the models of the admin’s providers too', () => {
    const control: ControlSet = {
      quotas: [],
      providers: [
        {
          name: 'acme',
          enabled: true,
          models: [{ model: 'm-1', maxRpm: 5, maxTpm: 0, maxRpd: 0 }],
        },
      ],
    };
    const out = composeQuotas(config([quota('default', 1)]), control, models('cluster'));
    expect(out.find((q) => q.name === 'm-1')).toMatchObject({ scope: 'cluster', match: 'm-1' });
  });

  it('does not change a quota the file defines under a model’s name', () => {
    const own = parseConfigFile(
      'providers: [openai]\nquotas:\n  - name: gpt-4o\n    match: gpt-4o\n    scope: local\n    limits: [{ name: rpm, limit: 5, window: 1m }]\n',
    );
    const quotas = composeQuotas(own, undefined, models('cluster')).filter(
      (q) => q.name === 'gpt-4o',
    );
    expect(quotas).toEqual([expect.objectContaining({ scope: 'local' })]);
  });
});

describe('composeQuotas: the queue of model quotas (PROVIDER_QUEUE_SIZE, PROVIDER_MAX_WAIT_MS)', () => {
  const withFile = parseConfigFile(
    'providers: [anthropic]\nquotas:\n  - name: api\n    limits: [{ name: rps, limit: 5, window: 1s }]\n',
  );
  const queues = (quotas: QuotaSpec[]) => quotas.map((q) => [q.name, q.queue]);

  it('gives every model quota the default queue, and no other quota one', () => {
    expect(queues(composeQuotas(withFile, undefined))).toEqual([
      ['default', withFile.quotas[0]?.queue],
      ['api', undefined],
      ['claude-opus-4', { maxSize: 1000, maxWaitMs: 60_000 }],
      ['claude-sonnet-4', { maxSize: 1000, maxWaitMs: 60_000 }],
      ['claude-haiku-3.5', { maxSize: 1000, maxWaitMs: 60_000 }],
    ]);
  });

  it('takes the queue asked for, or none', () => {
    const queue = { maxSize: 3, maxWaitMs: 500 };
    const asked = composeQuotas(withFile, undefined, { scope: 'local', queue });
    expect(asked.find((q) => q.name === 'claude-opus-4')?.queue).toEqual(queue);
    const none = composeQuotas(withFile, undefined, { scope: 'local', queue: undefined });
    expect(none.find((q) => q.name === 'claude-opus-4')).not.toHaveProperty('queue');
  });
});
