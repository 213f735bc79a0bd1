import type { CompiledLimit } from '../algorithms';
import { isCount, isInstant } from '../algorithms/state-check';
import { ROW_APPROVED, ROW_DENIED, ROW_STATS_WINDOW } from '../quota/compile';

/**
 * Why one key's row read from outside the engine (a stored row, a snapshot), laid out as
 * `limits`, cannot be a row the engine wrote, naming the field; undefined when it can. Each
 * algorithm judges its own numbers (`stateProblem`); the header is the stats window's.
 */
export function storedRowProblem(
  limits: readonly CompiledLimit[],
  s: Float64Array,
  base: number,
): string | undefined {
  if (!isInstant(s[base + ROW_STATS_WINDOW]!)) return 'statsWindow: must be an instant (epoch ms)';
  if (!isCount(s[base + ROW_APPROVED]!)) return 'approved: must be an integer >= 0';
  if (!isCount(s[base + ROW_DENIED]!)) return 'denied: must be an integer >= 0';
  for (const l of limits) {
    const problem = l.impl.stateProblem(s, base + l.offset, l);
    if (problem !== undefined) return `${l.name}.${problem}`;
  }
  return undefined;
}
