import { BUILT_IN_PROVIDERS, providerQuotas, type ProviderProfile } from '../providers';
import type { QuotaSpec } from '../quota-spec';
import type { LimiterConfig } from './parse-config';

/**
 * The quotas in force: the file's, then the model quotas of its enabled providers. A quota the
 * file defines under a model's name wins over the built-in profile, so operators can override one.
 */
export function effectiveQuotas(
  config: LimiterConfig,
  profiles: readonly ProviderProfile[] = BUILT_IN_PROVIDERS,
): QuotaSpec[] {
  const defined = new Set(config.quotas.map((quota) => quota.name));
  const fromProviders = providerQuotas(config.providers, profiles).filter(
    (quota) => !defined.has(quota.name),
  );
  return [...config.quotas, ...fromProviders];
}
