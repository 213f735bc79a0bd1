import { TypeCompiler } from '@sinclair/typebox/compiler';
import { BatchEnvelopeSchema } from '../messages/batch';
import type { NormalisedAcquire } from '../messages/normalised';
import { explainSchemaFailure } from './explain';
import { parseAcquire } from './parse-acquire';
import { fieldFailure, nestFailure, type ParseResult } from './parse-result';

const checkEnvelope = TypeCompiler.Compile(BatchEnvelopeSchema);

/** One entry of a batch: answered in its place, whether it parsed or not. */
export type BatchEntry = ParseResult<NormalisedAcquire>;

/** Validates one batch entry; `wait: true` is refused because a batch is answered at once. */
export function parseBatchEntry(entry: unknown, index: number): BatchEntry {
  const parsed = parseAcquire(entry);
  if (!parsed.ok) return nestFailure(`requests[${index}]`, parsed);
  if (parsed.value.wait === true) {
    return fieldFailure(
      `requests[${index}].wait`,
      'must be false or absent: batch entries cannot wait',
    );
  }
  return parsed;
}

/**
 * Fails as a whole only when the envelope is wrong (not an object, `requests` not an array of at
 * most 1000); otherwise returns one result per entry, in order.
 */
export function parseBatch(input: unknown): ParseResult<readonly BatchEntry[]> {
  if (!checkEnvelope.Check(input)) return explainSchemaFailure(checkEnvelope, input);
  const entries = input.requests.map(parseBatchEntry);
  return { ok: true, value: entries };
}
