import { effectiveQuotas } from './effective-quotas';
import { parseConfigFile } from './parse-config';

describe('effective quotas', () => {
  it('adds the model quotas of enabled providers after the file quotas', () => {
    const config = parseConfigFile('providers: [anthropic]');
    expect(effectiveQuotas(config).map((quota) => quota.name)).toEqual([
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
    const quotas = effectiveQuotas(config).filter((quota) => quota.name === 'gpt-4o');
    expect(quotas).toHaveLength(1);
    expect(quotas[0]?.limits).toEqual([
      { name: 'rpm', unit: 'requests', limit: 5, windowMs: 60_000, algorithm: 'fixed_window' },
    ]);
  });
});
