import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { secondsRoundedUp } from '@app/contracts/headers';
import type { AcquireReply } from '@app/contracts/messages/acquire';
import type { ClientAcquireReply, RateLimitClient } from '..';

/** The record @nestjs/throttler v6 reads: hits as a count, both durations in whole seconds. */
export interface ThrottlerRecord {
  totalHits: number;
  timeToExpire: number;
  isBlocked: boolean;
  timeToBlockExpire: number;
}

export interface RateLimitThrottlerStorageOptions {
  /** Throttler name -> limiter quota; a throttler not listed uses the quota of its own name. */
  readonly quotas?: Readonly<Record<string, string>>;
  /** Where the limit-mismatch warning goes; default a Nest Logger. */
  readonly logger?: Pick<Logger, 'warn'>;
}

/**
 * A @nestjs/throttler storage on the ratelimit service. The limits are the limiter's quotas
 * (server side): the throttler's `ttl`, `limit` and `blockDuration` are not sent, its key is the
 * limiter key and its name picks the quota. When a quota's limit differs from the throttler's
 * `limit`, the limiter's wins, and a warning says so once per throttler name.
 */
export class RateLimitThrottlerStorage implements ThrottlerStorage {
  private readonly warned = new Set<string>();
  private readonly logger: Pick<Logger, 'warn'>;

  constructor(
    private readonly client: RateLimitClient,
    private readonly options: RateLimitThrottlerStorageOptions = {},
  ) {
    this.logger = options.logger ?? new Logger(RateLimitThrottlerStorage.name);
  }

  async increment(
    key: string,
    _ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerRecord> {
    const quota = this.options.quotas?.[throttlerName] ?? throttlerName;
    const reply: ClientAcquireReply = await this.client.acquire({ key, quota });
    if (reply.code === 'UNKNOWN_QUOTA')
      this.warnOnce(throttlerName, unknownQuota(throttlerName, quota));
    else if (reply.policy !== true && reply.limit !== limit)
      this.warnOnce(throttlerName, mismatch(throttlerName, quota, limit, reply.limit));
    return toThrottlerRecord(reply);
  }

  /** One warning per throttler name: its calls are many, the cause is one. */
  private warnOnce(name: string, message: string): void {
    if (this.warned.has(name)) return;
    this.warned.add(name);
    this.logger.warn(message);
  }
}

function mismatch(name: string, quota: string, expected: number, actual: number): string {
  return `throttler "${name}" has limit ${expected} but the limiter's quota "${quota}" allows ${actual}; the limiter's limit is the one enforced`;
}

// Every call of such a throttler is refused (the limiter refuses UNKNOWN_QUOTA), so say why.
function unknownQuota(name: string, quota: string): string {
  return `throttler "${name}" maps to quota "${quota}", which the limiter does not have: every call is refused; create the quota or map the throttler with the storage's \`quotas\` option`;
}

/** An AcquireReply as the throttler's record: hits so far, and seconds until reset or retry. */
export function toThrottlerRecord(reply: AcquireReply): ThrottlerRecord {
  const used = Math.max(0, reply.limit - reply.remaining);
  const allowed = reply.allowed === true;
  return {
    totalHits: allowed ? used : reply.limit + 1,
    timeToExpire: secondsRoundedUp(reply.resetMs),
    isBlocked: !allowed,
    timeToBlockExpire: allowed ? 0 : Math.max(1, secondsRoundedUp(reply.retryAfterMs)),
  };
}
