/** How the quota list reads: a limit in one line, and which quotas a search keeps. */
import type { QuotaFieldsFragment, QuotaSource } from '../../api/generated';
import { duration } from '../../ui/format';

type StoredLimit = Pick<
  QuotaFieldsFragment['limits'][number],
  'limit' | 'unit' | 'windowMs' | 'algorithm'
>;

/** "100 / 1m sliding_window"; a unit other than requests is named: "5000 tokens / 1m …". */
export function limitSummary(limit: StoredLimit): string {
  const amount = limit.limit === 0 ? 'unlimited' : String(limit.limit);
  const unit = limit.unit === 'requests' ? '' : ` ${limit.unit}`;
  return `${amount}${unit} / ${duration(limit.windowMs)} ${limit.algorithm}`;
}

/** The quotas whose name or match holds `search` (any case); all of them for a blank search. */
export function filterQuotas<Q extends Pick<QuotaFieldsFragment, 'name' | 'match'>>(
  quotas: readonly Q[],
  search: string,
): Q[] {
  const needle = search.trim().toLowerCase();
  if (needle === '') return [...quotas];
  return quotas.filter(
    (q) => q.name.toLowerCase().includes(needle) || (q.match ?? '').toLowerCase().includes(needle),
  );
}

/** Where a quota in force comes from, as the Source column says it. */
export function sourceLabel(source: QuotaSource, provider: string | null): string {
  switch (source) {
    case 'admin':
      return 'admin';
    case 'config_file':
      return "limiters' config file";
    case 'provider_model':
      return provider === null || provider === '' ? 'provider model' : `provider ${provider}`;
    case 'default':
      return 'built-in default';
  }
}
