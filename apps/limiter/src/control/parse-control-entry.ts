import {
  DEFAULT_QUOTA_NAME,
  entryKindOf,
  formatConfigPath,
  isQuotaName,
  IssueList,
  providerEntryKey,
  quotaEntryKey,
  readQuota,
  type ControlEntry,
  type ControlProvider,
  type ControlQuota,
  type ModelProfile,
  isProviderName,
} from '@app/contracts';

/** A KV value, or why it cannot be served (`key: field: rule`, like a refused config file). */
export type ParsedEntry =
  | { readonly ok: true; readonly entry: ControlEntry }
  | { readonly ok: false; readonly reason: string };

const MODEL_FIELDS = ['maxRpm', 'maxTpm', 'maxRpd'] as const;

type Fields = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Reads one entry of the control bucket. The quota spec goes through the config file's reader
 * (readQuota), so the admin's quotas obey exactly the rules a CONFIG_FILE quota does; the rest of
 * the shape is checked here. The value must sit under the key its name gives (quotaEntryKey,
 * providerEntryKey): otherwise deleting that key would not remove it.
 */
export function parseControlEntry(key: string, value: string): ParsedEntry {
  const kind = entryKindOf(key);
  if (kind === undefined) return refused(key, 'is not a quota.* or provider.* entry');
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch (error) {
    return refused(key, `is not JSON (${(error as Error).message})`);
  }
  switch (kind) {
    case 'quota':
      return parseQuotaEntry(key, json);
    case 'provider':
      return parseProviderEntry(key, json);
  }
}

function parseQuotaEntry(key: string, json: unknown): ParsedEntry {
  if (!isObject(json)) return refused(key, 'must be an object { spec, version, updatedAt }');
  if (!isCount(json['version']) || json['version'] < 1) {
    return refused(key, 'version: must be an integer >= 1');
  }
  if (!isCount(json['updatedAt'])) return refused(key, 'updatedAt: must be epoch ms');
  const issues = new IssueList();
  const spec = readQuota(json['spec'], ['spec'], issues);
  const first = issues.all[0];
  if (first !== undefined) {
    return refused(key, `${formatConfigPath(first.path)}: ${first.message}`);
  }
  if (spec === undefined) return refused(key, 'spec: must be a quota');
  if (quotaEntryKey(spec.name) !== key) {
    return refused(key, `spec.name: "${spec.name}" belongs under ${quotaEntryKey(spec.name)}`);
  }
  // As in the config file: a default quota with a match would take keys from other quotas.
  if (spec.name === DEFAULT_QUOTA_NAME && spec.match !== undefined) {
    return refused(key, 'spec.match: the default quota serves unmatched keys and takes no match');
  }
  const quota: ControlQuota = { spec, version: json['version'], updatedAt: json['updatedAt'] };
  return { ok: true, entry: { kind: 'quota', quota } };
}

function parseProviderEntry(key: string, json: unknown): ParsedEntry {
  if (!isObject(json)) return refused(key, 'must be an object { name, enabled, models }');
  const name = json['name'];
  if (typeof name !== 'string' || !isProviderName(name)) {
    return refused(key, 'name: must be [a-z][a-z0-9_-]*, at most 64 characters');
  }
  if (providerEntryKey(name) !== key) {
    return refused(key, `name: "${name}" belongs under ${providerEntryKey(name)}`);
  }
  if (typeof json['enabled'] !== 'boolean') return refused(key, 'enabled: must be true or false');
  const models = json['models'];
  if (!Array.isArray(models)) return refused(key, 'models: must be a list');
  const read: ModelProfile[] = [];
  const seen = new Set<string>();
  for (const [index, model] of (models as unknown[]).entries()) {
    const at = `models[${index}]`;
    if (!isObject(model)) return refused(key, `${at}: must be { model, maxRpm, maxTpm, maxRpd }`);
    const modelName = model['model'];
    // The model names its quota: the same rule as any quota name.
    if (typeof modelName !== 'string' || !isQuotaName(modelName)) {
      return refused(key, `${at}.model: must be 1..128 characters of [A-Za-z0-9._:-]`);
    }
    if (seen.has(modelName)) return refused(key, `${at}.model: "${modelName}" is listed twice`);
    seen.add(modelName);
    for (const field of MODEL_FIELDS) {
      if (!isCount(model[field])) {
        return refused(key, `${at}.${field}: must be an integer >= 0 (0: unlimited)`);
      }
    }
    read.push({
      model: modelName,
      maxRpm: model['maxRpm'] as number,
      maxTpm: model['maxTpm'] as number,
      maxRpd: model['maxRpd'] as number,
    });
  }
  const provider: ControlProvider = { name, enabled: json['enabled'], models: read };
  return { ok: true, entry: { kind: 'provider', provider } };
}

function refused(key: string, reason: string): ParsedEntry {
  return { ok: false, reason: `${key}: ${reason}` };
}
