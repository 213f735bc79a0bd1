/** How the quota list reads: a limit in one line, and which quotas a search keeps. */
import type { QuotaFieldsFragment } from '../../api/generated';
import { duration } from '../../ui/format';

type StoredLimit = QuotaFieldsFragment['limits'][number];

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
