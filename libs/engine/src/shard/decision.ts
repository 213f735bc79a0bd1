import type { Decision, DecisionCode } from '../types';

/** One shape for every reply, so the hot path stays monomorphic. */
export class Reply implements Decision {
  allowed: boolean;
  code: DecisionCode;
  requestId: string;
  key: string;
  quota: string;
  limit = 0;
  remaining = 0;
  resetMs = 0;
  retryAfterMs = 0;
  waitedMs = 0;
  limitName = '';
  leaseId: string | undefined = undefined;
  shadow = false;
  reason: string | undefined = undefined;

  constructor(allowed: boolean, code: DecisionCode, requestId: string, key: string, quota: string) {
    this.allowed = allowed;
    this.code = code;
    this.requestId = requestId;
    this.key = key;
    this.quota = quota;
  }
}

export function refusal(
  code: DecisionCode,
  requestId: string,
  key: string,
  quota: string,
  reason: string,
): Reply {
  const r = new Reply(false, code, requestId, key, quota);
  r.reason = reason;
  return r;
}
