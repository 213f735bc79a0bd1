import { rateLimitHeaderList, type RateLimitHeaderMode } from '@app/contracts';
import type { Decision } from '@app/engine';
import { Inject, Injectable } from '@nestjs/common';
import { LimiterService } from '../engine-host/limiter.service';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';

/**
 * The rate-limit headers of `/rate/:key` and `/v1/acquire` (docs/contract.md, Headers), in the
 * mode RATELIMIT_HEADERS chose. The draft's `RateLimit-Policy` says the binding limit's window,
 * which a decision does not carry: it is read from the decision's quota, only when those headers
 * are sent.
 */
@Injectable()
export class RateLimitHeaders {
  private readonly mode: RateLimitHeaderMode;

  constructor(
    private readonly limiter: LimiterService,
    @Inject(LIMITER_SETTINGS) settings: LimiterSettings,
  ) {
    this.mode = settings.rateLimitHeaders;
  }

  /** The headers as a flat name, value list; none when no limit decided the request. */
  of(decision: Decision): string[] {
    // A request refused before any limit looked at it (invalid, unknown quota) has none to describe.
    if (decision.code === 'INVALID_REQUEST' || decision.code === 'UNKNOWN_QUOTA') return [];
    if (this.mode === 'legacy') return rateLimitHeaderList(decision);
    const spec = this.limiter.quotaSpecFor(decision.key, decision.quota);
    return rateLimitHeaderList(decision, this.mode, spec?.limits);
  }
}
