import type { CostByUnit } from '../messages/normalised';

/** `requests` defaults to 1 (docs/contract.md, Messages); frozen because every caller shares it. */
const DEFAULT_COST: CostByUnit = Object.freeze({ requests: 1 });

/**
 * Turns a schema-checked cost into one object per unit with `requests` present. Unit names were
 * already checked against the unit pattern, which admits no inherited property name.
 */
export function normaliseCost(
  cost: number | Readonly<Record<string, number>> | undefined,
): CostByUnit {
  if (cost === undefined) return DEFAULT_COST;
  if (typeof cost === 'number') return { requests: cost };
  const byUnit: Record<string, number> = { requests: 1 };
  for (const [unit, amount] of Object.entries(cost)) byUnit[unit] = amount;
  return byUnit;
}
