import { encodeEntry, providerEntryKey, quotaEntryKey, type ControlQuota } from '@app/contracts';
import { parseControlEntry } from './parse-control-entry';

const quota: ControlQuota = {
  spec: {
    name: 'api',
    match: 'api-*',
    limits: [
      { name: 'rps', unit: 'requests', limit: 100, windowMs: 10_000, algorithm: 'fixed_window' },
    ],
  },
  version: 3,
  updatedAt: 1_700_000_000_000,
};
const quotaValue = (over: Record<string, unknown>): string => JSON.stringify({ ...quota, ...over });
const specValue = (spec: Record<string, unknown>): string =>
  quotaValue({ spec: { ...quota.spec, ...spec } });
const provider = {
  name: 'openai',
  enabled: true,
  models: [{ model: 'gpt-4o', maxRpm: 500, maxTpm: 30_000, maxRpd: 0 }],
};
const providerValue = (over: Record<string, unknown>): string =>
  JSON.stringify({ ...provider, ...over });
const reasonOf = (key: string, value: string): string => {
  const parsed = parseControlEntry(key, value);
  if (parsed.ok) throw new Error(`accepted: ${value}`);
  return parsed.reason;
};

describe('parseControlEntry: quotas', () => {
  const key = quotaEntryKey('api');

  it('reads what encodeEntry wrote, normalised like a config quota', () => {
    const { key: written, value } = encodeEntry({ kind: 'quota', quota });
    expect(parseControlEntry(written, value)).toEqual({
      ok: true,
      entry: { kind: 'quota', quota },
    });
    // The config file's defaults apply: unit requests, algorithm fixed_window.
    const short = specValue({ limits: [{ name: 'rps', limit: 5, windowMs: 1000 }] });
    expect(parseControlEntry(key, short)).toMatchObject({
      ok: true,
      entry: { quota: { spec: { limits: [{ unit: 'requests', algorithm: 'fixed_window' }] } } },
    });
  });

  it('carries the lease mode the admin set', () => {
    const off: ControlQuota = { ...quota, spec: { ...quota.spec, lease: 'off' } };
    const { key: written, value } = encodeEntry({ kind: 'quota', quota: off });
    expect(parseControlEntry(written, value)).toEqual({
      ok: true,
      entry: { kind: 'quota', quota: off },
    });
  });

  it.each([
    ['not json', 'is not JSON'],
    ['[1]', 'must be an object { spec, version, updatedAt }'],
    [quotaValue({ version: 0 }), 'version: must be an integer >= 1'],
    [quotaValue({ version: undefined }), 'version: must be an integer >= 1'],
    [quotaValue({ updatedAt: 'yesterday' }), 'updatedAt: must be epoch ms'],
    [quotaValue({ spec: 'api' }), 'spec: must be a mapping'],
    [
      specValue({ limits: [{ name: 'rps', limit: -1, windowMs: 1000 }] }),
      'spec.limits[0].limit: must be an integer >= 0',
    ],
    [specValue({ limits: [{ name: 'rps', limit: 1, window: 'soon' }] }), 'spec.limits[0].window:'],
    [specValue({ match: 're:(' }), 'spec.match:'],
    [specValue({ scope: 'galaxy' }), 'spec.scope:'],
    [specValue({ lease: 'sometimes' }), 'spec.lease: must be one of: auto, off'],
    [specValue({ maxsize: 3 }), 'spec.maxsize: is not a known field'],
    [specValue({ name: 'other' }), `spec.name: "other" belongs under ${quotaEntryKey('other')}`],
  ])('refuses %s naming the field', (value, reason) => {
    expect(reasonOf(key, value)).toContain(`${key}: ${reason}`);
  });

  it('refuses a default quota with a match, as the config file does', () => {
    const value = specValue({ name: 'default', match: 'x-*' });
    expect(reasonOf(quotaEntryKey('default'), value)).toContain('spec.match: the default quota');
  });
});

describe('parseControlEntry: providers', () => {
  const key = providerEntryKey('openai');

  it('reads a provider profile', () => {
    expect(parseControlEntry(key, providerValue({}))).toEqual({
      ok: true,
      entry: { kind: 'provider', provider },
    });
    expect(parseControlEntry(key, providerValue({ enabled: false, models: [] }))).toMatchObject({
      ok: true,
      entry: { provider: { enabled: false, models: [] } },
    });
  });

  it.each([
    ['"openai"', 'must be an object'],
    [providerValue({ name: 'OpenAI' }), 'name: must be [a-z]'],
    [
      providerValue({ name: 'gemini' }),
      `name: "gemini" belongs under ${providerEntryKey('gemini')}`,
    ],
    [providerValue({ enabled: 'yes' }), 'enabled: must be true or false'],
    [providerValue({ models: {} }), 'models: must be a list'],
    [providerValue({ models: [7] }), 'models[0]: must be'],
    [providerValue({ models: [{ ...provider.models[0], model: 'a b' }] }), 'models[0].model:'],
    [
      providerValue({ models: [{ ...provider.models[0], maxTpm: -5 }] }),
      'models[0].maxTpm: must be an integer >= 0',
    ],
    [providerValue({ models: [{ ...provider.models[0], maxRpd: 1.5 }] }), 'models[0].maxRpd:'],
    [
      providerValue({ models: [provider.models[0], provider.models[0]] }),
      'models[1].model: "gpt-4o" is listed twice',
    ],
  ])('refuses %s naming the field', (value, reason) => {
    expect(reasonOf(key, value)).toContain(`${key}: ${reason}`);
  });
});

it('refuses keys that are neither quota.* nor provider.*', () => {
  expect(reasonOf('settings.x', '{}')).toBe('settings.x: is not a quota.* or provider.* entry');
});
