import { BUILT_IN_PROVIDERS, findProvider, modelQuota, providerQuotas } from './providers';

describe('built-in provider profiles', () => {
  it('are the table of docs/contract.md, Built-in provider profiles', () => {
    const rows = BUILT_IN_PROVIDERS.flatMap((provider) =>
      provider.models.map((m) => `${provider.name} ${m.model} ${m.maxRpm} ${m.maxTpm} ${m.maxRpd}`),
    );
    expect(rows).toEqual([
      'gemini gemini-3-pro-preview 150 1000000 1000',
      'gemini gemini-3-flash-preview 150 1000000 1000',
      'gemini gemini-2.5-pro 150 1000000 1000',
      'gemini gemini-2.0-flash 150 1000000 0',
      'gemini gemini-2.0-flash-lite 0 0 0',
      'openai gpt-4o 500 30000 0',
      'openai gpt-4o-mini 500 200000 0',
      'openai gpt-4-turbo 500 30000 0',
      'openai o1 500 30000 0',
      'openai o1-mini 500 200000 0',
      'openai o3-mini 500 200000 0',
      'anthropic claude-opus-4 50 40000 0',
      'anthropic claude-sonnet-4 50 40000 0',
      'anthropic claude-haiku-3.5 50 50000 0',
    ]);
    expect(BUILT_IN_PROVIDERS.map((provider) => provider.name)).toEqual([
      'gemini',
      'openai',
      'anthropic',
      'local',
    ]);
    expect(findProvider('local')?.models).toEqual([]);
  });

  it('turn a model into the quota the contract describes', () => {
    expect(
      modelQuota({ model: 'gemini-2.5-pro', maxRpm: 150, maxTpm: 1_000_000, maxRpd: 1000 }),
    ).toEqual({
      name: 'gemini-2.5-pro',
      match: 'gemini-2.5-pro',
      queue: { maxSize: 1000, maxWaitMs: 60_000 },
      limits: [
        {
          name: 'rpm',
          unit: 'requests',
          limit: 150,
          windowMs: 60_000,
          algorithm: 'sliding_window',
        },
        {
          name: 'tpm',
          unit: 'tokens',
          limit: 1_000_000,
          windowMs: 60_000,
          algorithm: 'sliding_window',
        },
        {
          name: 'rpd',
          unit: 'requests',
          limit: 1000,
          windowMs: 86_400_000,
          algorithm: 'fixed_window',
          align: 'calendar',
          timezone: 'America/Los_Angeles',
        },
      ],
    });
  });

  it('keep zero limits as 0, which means unlimited', () => {
    const quota = modelQuota({ model: 'gemini-2.0-flash-lite', maxRpm: 0, maxTpm: 0, maxRpd: 0 });
    expect(quota.limits.map((limit) => limit.limit)).toEqual([0, 0, 0]);
  });

  it('match exactly the model key, even when the name has glob syntax', () => {
    expect(modelQuota({ model: 'odd*model', maxRpm: 1, maxTpm: 1, maxRpd: 1 }).match).toBe(
      're:^odd\\*model$',
    );
  });

  it('give the model quotas of enabled providers only', () => {
    const names = providerQuotas(['anthropic', 'local', 'unknown-provider']).map((q) => q.name);
    expect(names).toEqual(['claude-opus-4', 'claude-sonnet-4', 'claude-haiku-3.5']);
    expect(providerQuotas([])).toEqual([]);
  });
});
