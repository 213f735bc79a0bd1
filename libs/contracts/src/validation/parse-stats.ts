import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { NormalisedStats } from '../messages/normalised';
import { StatsRequestSchema } from '../messages/stats';
import { explainSchemaFailure } from './explain';
import { normaliseKey } from './key';
import type { ParseResult } from './parse-result';

const checkStats = TypeCompiler.Compile(StatsRequestSchema);

export function parseStats(input: unknown): ParseResult<NormalisedStats> {
  if (!checkStats.Check(input)) return explainSchemaFailure(checkStats, input);
  const key = normaliseKey(input.key);
  if (!key.ok) return key;
  return {
    ok: true,
    value: input.quota === undefined ? { key: key.value } : { key: key.value, quota: input.quota },
  };
}
