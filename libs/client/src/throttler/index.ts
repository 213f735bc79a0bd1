/**
 * A @nestjs/throttler storage on the ratelimit service (`@ratelimit/client/throttler`): its own
 * entry, so `./nest` type-checks in projects without @nestjs/throttler.
 */
export {
  RateLimitThrottlerStorage,
  toThrottlerRecord,
  type RateLimitThrottlerStorageOptions,
  type ThrottlerRecord,
} from './rate-limit-throttler.storage';
