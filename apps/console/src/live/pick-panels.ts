import type { QuotaHistory } from './history';

/**
 * Charts drawn at once: each panel is two canvases redrawn every second, so a page with hundreds
 * of quotas would spend its main thread on them. The busiest are drawn; a filter reaches the rest.
 */
export const MAX_PANELS = 24;

export interface PanelPick {
  /** Quotas with decisions in the window, busiest first: at most `max`. */
  readonly shown: QuotaHistory[];
  /** Busy quotas the filter matched that are not drawn. */
  readonly hidden: number;
  /** Quotas the filter matched with no decision in the window, by name (folded away). */
  readonly idle: QuotaHistory[];
}

/** Traffic of the latest sample: decisions per second, refusals per second, then keys held. */
function busyness(quota: QuotaHistory): [number, number, number] {
  const latest = quota.latest();
  const refused = latest?.refused ?? 0;
  return [(latest?.admitted ?? 0) + refused, refused, latest?.keys ?? 0];
}

const byName = (a: QuotaHistory, b: QuotaHistory): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

/**
 * The quotas whose name contains `filter` (any case): the busy ones busiest first (decisions per
 * second in the latest update, then refusals, then keys held, then name), at most `max`; the
 * idle ones (no decision in the window) apart, by name.
 */
export function pickPanels(
  quotas: readonly QuotaHistory[],
  filter: string,
  max = MAX_PANELS,
): PanelPick {
  const needle = filter.trim().toLowerCase();
  const matched =
    needle === '' ? [...quotas] : quotas.filter((q) => q.name.toLowerCase().includes(needle));
  const idle = matched.filter((q) => q.idle).sort(byName);
  const busy = matched
    .filter((q) => !q.idle)
    .map((quota) => ({ quota, by: busyness(quota) }))
    .sort(
      (a, b) =>
        b.by[0] - a.by[0] || b.by[1] - a.by[1] || b.by[2] - a.by[2] || byName(a.quota, b.quota),
    )
    .map((r) => r.quota);
  return { shown: busy.slice(0, max), hidden: Math.max(0, busy.length - max), idle };
}
