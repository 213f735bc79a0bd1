import type { Cost } from '../types';

/** Cost of a request in one unit: a number is in `requests`; `requests` defaults to 1. */
export function costFor(cost: Cost | undefined, unit: string): number {
  if (cost === undefined) return unit === 'requests' ? 1 : 0;
  if (typeof cost === 'number') return unit === 'requests' ? cost : 0;
  const c = cost[unit];
  return c === undefined ? (unit === 'requests' ? 1 : 0) : c;
}

function validAmount(n: unknown): boolean {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** A cheap guard for callers that skipped the contract's validation; names the bad field. */
export function costProblem(cost: unknown): string | undefined {
  if (cost === undefined) return undefined;
  if (typeof cost === 'number')
    return validAmount(cost) ? undefined : 'cost: must be an integer >= 0';
  if (typeof cost !== 'object' || cost === null || Array.isArray(cost)) {
    return 'cost: must be an integer or an object of unit: integer';
  }
  // for-in, not Object.keys: no array per request on the hot path.
  for (const unit in cost) {
    if (!validAmount((cost as Record<string, unknown>)[unit])) {
      return `cost.${unit}: must be an integer >= 0`;
    }
  }
  return undefined;
}
