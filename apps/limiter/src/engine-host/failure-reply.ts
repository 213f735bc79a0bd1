import type { ErrorReply } from '@app/contracts';
import type { Outcome } from '@app/engine';

/**
 * The reply to a release, usage or stats request the engine could not serve, the same on every
 * transport: an unknown quota names the `quota` field, as a validation failure names its own.
 */
export function failureReply(failure: Outcome<unknown> & { ok: false }): ErrorReply {
  return {
    ok: false,
    allowed: false,
    code: failure.code,
    reason: failure.reason,
    ...(failure.code === 'UNKNOWN_QUOTA' && { field: 'quota' }),
  };
}
