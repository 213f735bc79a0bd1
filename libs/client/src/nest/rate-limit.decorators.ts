import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { RateLimitGuard } from './rate-limit.guard';
import {
  RATE_LIMIT_METADATA,
  SKIP_RATE_LIMIT_METADATA,
  type RateLimitRouteOptions,
} from './rate-limit.options';

/**
 * Limits a handler, or every handler of a controller or resolver class, through RateLimitGuard.
 * With the guard also registered globally (APP_GUARD) a call is still charged once.
 */
export function RateLimit(options: RateLimitRouteOptions = {}): ClassDecorator & MethodDecorator {
  return applyDecorators(SetMetadata(RATE_LIMIT_METADATA, options), UseGuards(RateLimitGuard));
}

/** Exempts a handler (or class) from a class-level or global rate limit. */
export function SkipRateLimit(): ClassDecorator & MethodDecorator {
  return SetMetadata(SKIP_RATE_LIMIT_METADATA, true);
}
