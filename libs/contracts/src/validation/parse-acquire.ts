import { TypeCompiler } from '@sinclair/typebox/compiler';
import { AcquireRequestSchema } from '../messages/acquire';
import type { NormalisedAcquire } from '../messages/normalised';
import { normaliseCost } from './cost';
import { explainSchemaFailure } from './explain';
import { normaliseKey } from './key';
import type { ParseResult } from './parse-result';
import type { Writable } from '../writable';

const checkAcquire = TypeCompiler.Compile(AcquireRequestSchema);

/**
 * Validates an AcquireRequest (also decide and batch entries) and returns it normalised: NFC key,
 * cost per unit with `requests` defaulted, unknown fields dropped.
 */
export function parseAcquire(input: unknown): ParseResult<NormalisedAcquire> {
  if (!checkAcquire.Check(input)) return explainSchemaFailure(checkAcquire, input);
  const key = normaliseKey(input.key);
  if (!key.ok) return key;
  const value: Writable<NormalisedAcquire> = { key: key.value, cost: normaliseCost(input.cost) };
  if (input.quota !== undefined) value.quota = input.quota;
  if (input.wait !== undefined) value.wait = input.wait;
  if (input.maxWaitMs !== undefined) value.maxWaitMs = input.maxWaitMs;
  if (input.requestId !== undefined) value.requestId = input.requestId;
  if (input.deadline !== undefined) value.deadline = input.deadline;
  return { ok: true, value };
}

/** decide takes an AcquireRequest; it never waits, so `wait` is accepted and has no effect. */
export const parseDecide = parseAcquire;
