/** The NestJS integration of the ratelimit client (`@ratelimit/client/nest`). */
export { RateLimitModule } from './rate-limit.module';
export { RateLimitGuard } from './rate-limit.guard';
export { RateLimit, SkipRateLimit } from './rate-limit.decorators';
export { RateLimitKeys, httpRequestOf, type HttpRequestLike } from './call-context';
export { RateLimitGraphQlError, type GuardReply } from './refusals';
export {
  RATE_LIMIT_MODULE_OPTIONS,
  type FromContext,
  type RateLimitCost,
  type RateLimitHeaderMode,
  type RateLimitModuleAsyncOptions,
  type RateLimitModuleOptions,
  type RateLimitRouteOptions,
} from './rate-limit.options';
export { RateLimitConnection } from './rate-limit.connection';
