import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { NormalisedRelease } from '../messages/normalised';
import { ReleaseRequestSchema } from '../messages/release';
import { explainSchemaFailure } from './explain';
import { normaliseKey } from './key';
import type { ParseResult } from './parse-result';
import type { Writable } from '../writable';

const checkRelease = TypeCompiler.Compile(ReleaseRequestSchema);

/**
 * Both ids are optional (docs/contract.md, Messages); a release naming neither answers `released:
 * false`.
 */
export function parseRelease(input: unknown): ParseResult<NormalisedRelease> {
  if (!checkRelease.Check(input)) return explainSchemaFailure(checkRelease, input);
  const key = normaliseKey(input.key);
  if (!key.ok) return key;
  const value: Writable<NormalisedRelease> = { key: key.value };
  if (input.quota !== undefined) value.quota = input.quota;
  if (input.requestId !== undefined) value.requestId = input.requestId;
  if (input.leaseId !== undefined) value.leaseId = input.leaseId;
  return { ok: true, value };
}
