import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { NormalisedUsage } from '../messages/normalised';
import { UsageRequestSchema } from '../messages/usage';
import { normaliseCost } from './cost';
import { explainSchemaFailure } from './explain';
import { normaliseKey } from './key';
import type { ParseResult } from './parse-result';
import type { Writable } from '../writable';

const checkUsage = TypeCompiler.Compile(UsageRequestSchema);

/**
 * `cost` is required and follows the acquire rules, `requests` defaulting to 1: usage describes one
 * request that happened. Send `requests: 0` to settle or record tokens only.
 */
export function parseUsage(input: unknown): ParseResult<NormalisedUsage> {
  if (!checkUsage.Check(input)) return explainSchemaFailure(checkUsage, input);
  const key = normaliseKey(input.key);
  if (!key.ok) return key;
  const value: Writable<NormalisedUsage> = { key: key.value, cost: normaliseCost(input.cost) };
  if (input.quota !== undefined) value.quota = input.quota;
  if (input.requestId !== undefined) value.requestId = input.requestId;
  return { ok: true, value };
}
