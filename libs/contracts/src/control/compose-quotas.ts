import type { LimiterConfig } from '../config/parse-config';
import {
  BUILT_IN_PROVIDERS,
  DEFAULT_MODEL_OPTIONS,
  providerQuotas,
  type ModelQuotaOptions,
  type ProviderProfile,
} from '../providers';
import type { QuotaSpec } from '../quota-spec';
import type { ControlSet } from './control-entries';

/**
 * The quotas a limiter serves, in three layers:
 * 1. its own config (CONFIG_FILE, or the default quota from MAX_REQUESTS / WINDOW_MILLIS);
 * 2. the admin's quotas, which replace a config quota of the same name or add to them;
 * 3. the model quotas of enabled providers, unless a quota of layers 1-2 has the model's name or
 *    claims the model's key with the same `match` (the model quota's match is its name): that
 *    quota serves the model, and one pattern never names two quotas.
 * Once the admin has published provider profiles, its enabled flags and model limits decide;
 * the config's `providers:` list applies only to a limiter that has never heard from an admin.
 * `models` are the scope and queue of the model quotas (layer 3): a provider's limits are the
 * organisation's, so a limiter with Redis makes them `cluster` (PROVIDER_SCOPE), and they queue
 * (PROVIDER_QUEUE_SIZE, PROVIDER_MAX_WAIT_MS).
 */
export function composeQuotas(
  config: LimiterConfig,
  control: ControlSet | undefined,
  modelOptions: ModelQuotaOptions = DEFAULT_MODEL_OPTIONS,
  builtIn: readonly ProviderProfile[] = BUILT_IN_PROVIDERS,
): QuotaSpec[] {
  const byName = new Map<string, QuotaSpec>();
  for (const quota of config.quotas) byName.set(quota.name, quota);
  for (const { spec } of control?.quotas ?? []) byName.set(spec.name, spec);

  const adminProviders = control?.providers ?? [];
  const models =
    adminProviders.length > 0
      ? providerQuotas(
          adminProviders.filter((p) => p.enabled).map((p) => p.name),
          [...adminProviders].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
          modelOptions,
        )
      : providerQuotas(config.providers, builtIn, modelOptions);
  const quotas = [...byName.values()];
  if (models.length === 0) return quotas;
  const claimed = new Set<string>();
  for (const q of quotas) if (q.match !== undefined) claimed.add(q.match);
  // A model two enabled providers both list is served once, by the first (by name).
  for (const model of models) {
    if (byName.has(model.name) || claimed.has(model.match ?? model.name)) continue;
    byName.set(model.name, model);
    quotas.push(model);
  }
  return quotas;
}
