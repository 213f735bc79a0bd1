import type { QuotaHistory } from './history';

/**
 * Charts drawn at once: each panel is two canvases redrawn every second, so a page with hundreds
 * of quotas would spend its main thread on them. The busiest are drawn; a filter reaches the rest.
 */
export const MAX_PANELS = 24;

export interface PanelPick {
  readonly shown: QuotaHistory[];
  /** Quotas the filter matched that are not drawn. */
  readonly hidden: number;
}

/** Traffic of the latest sample: admitted and refused per second, then keys held. */
function busyness(quota: QuotaHistory): [number, number] {
  const latest = quota.latest();
  return [(latest?.admitted ?? 0) + (latest?.refused ?? 0), latest?.keys ?? 0];
}

/**
 * The quotas whose name contains `filter` (any case): all of them up to `max`, else the `max`
 * busiest. Shown by name, so panels do not move about as traffic shifts.
 */
export function pickPanels(
  quotas: readonly QuotaHistory[],
  filter: string,
  max = MAX_PANELS,
): PanelPick {
  const needle = filter.trim().toLowerCase();
  const matched =
    needle === '' ? [...quotas] : quotas.filter((q) => q.name.toLowerCase().includes(needle));
  if (matched.length <= max) return { shown: matched, hidden: 0 };
  const ranked = matched
    .map((quota) => ({ quota, by: busyness(quota) }))
    .sort(
      (a, b) => b.by[0] - a.by[0] || b.by[1] - a.by[1] || (a.quota.name < b.quota.name ? -1 : 1),
    )
    .slice(0, max)
    .map((r) => r.quota)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { shown: ranked, hidden: matched.length - max };
}
