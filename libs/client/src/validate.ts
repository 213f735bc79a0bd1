import type { AcquireRequest } from '@app/contracts/messages/acquire';
import type { ParseResult } from '@app/contracts/validation/parse-result';
import { MAX_BATCH_ENTRIES } from '@app/contracts/messages/limits';
import { parseAcquire } from '@app/contracts/validation/parse-acquire';
import { parseRelease } from '@app/contracts/validation/parse-release';
import { nestFailure } from '@app/contracts/validation/parse-result';
import { parseStats } from '@app/contracts/validation/parse-stats';
import { parseUsage } from '@app/contracts/validation/parse-usage';
import { InvalidRequestError } from './errors';

/**
 * Checks input with the contract's own validators before it is sent (compiled schema checks, a
 * few microseconds), so a bad call throws InvalidRequestError naming the field and costs no
 * round trip. The limiter checks again: this is a convenience, not the guard.
 */
function check(result: ParseResult<unknown>): void {
  if (!result.ok) throw new InvalidRequestError(result.field, result.reason);
}

export const checkAcquire = (request: unknown): void => check(parseAcquire(request));
export const checkRelease = (request: unknown): void => check(parseRelease(request));
export const checkUsage = (request: unknown): void => check(parseUsage(request));
export const checkStats = (request: unknown): void => check(parseStats(request));

/** A batch as the contract has it: at most 1000 entries, none waiting; fields named `requests[i].…`. */
export function checkBatch(requests: readonly AcquireRequest[]): void {
  if (!Array.isArray(requests)) {
    throw new InvalidRequestError('requests', 'requests: must be an array of acquire requests');
  }
  if (requests.length > MAX_BATCH_ENTRIES) {
    throw new InvalidRequestError(
      'requests',
      `requests: must be an array of at most ${MAX_BATCH_ENTRIES} acquire requests`,
    );
  }
  for (let i = 0; i < requests.length; i++) {
    const parsed = parseAcquire(requests[i]);
    if (!parsed.ok) {
      const nested = nestFailure(`requests[${i}]`, parsed);
      throw new InvalidRequestError(nested.field, nested.reason);
    }
    if (parsed.value.wait === true) {
      throw new InvalidRequestError(
        `requests[${i}].wait`,
        `requests[${i}].wait: must be false or absent: batch entries cannot wait`,
      );
    }
  }
}
