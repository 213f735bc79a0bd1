import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InvalidRequestError, LimiterUnavailableError, RateLimitClient } from '..';
import {
  DEFAULT_RATE_LIMIT_HEADER_MODE,
  isRateLimitHeaderMode,
  RATE_LIMIT_HEADER_MODES,
  rateLimitHeaderList,
  type RateLimitHeaderMode,
} from '@app/contracts/headers';
import { undecidedReply } from '../replies';
import { httpResponseOf, onHttpResponseEnd, setHeaders } from './call-context';
import {
  RATE_LIMIT_METADATA,
  RATE_LIMIT_MODULE_OPTIONS,
  SKIP_RATE_LIMIT_METADATA,
  type FromContext,
  type RateLimitModuleOptions,
  type RateLimitRouteOptions,
} from './rate-limit.options';
import { invalidInput, refusal, type GuardReply } from './refusals';

/**
 * The argument lists of calls already charged: Nest builds one per call and hands it to each of
 * its guards, which may be different instances (a global one, one per module using @RateLimit).
 */
const charged = new WeakSet<object>();

/**
 * Charges each guarded call to the limiter. Routes are chosen by `@RateLimit()` (handler first,
 * then class), else by the module's default `key` when the guard is global; `@SkipRateLimit()`
 * exempts. A call is charged once even when the guard runs both globally and by `@RateLimit()`.
 * Over HTTP, a concurrency lease the call took is released when its response ends.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly headers: RateLimitHeaderMode;

  constructor(
    private readonly limiter: RateLimitClient,
    private readonly reflector: Reflector,
    @Inject(RATE_LIMIT_MODULE_OPTIONS) private readonly defaults: RateLimitModuleOptions,
  ) {
    this.headers = headerMode(defaults.headers);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const route = this.routeOptions(context);
    if (route === undefined) return true;
    const args = context.getArgs();
    if (charged.has(args)) return true;
    charged.add(args);
    const key = await resolve(context, route.key ?? this.defaults.key);
    if (typeof key !== 'string' || key === '') {
      throw invalidInput(
        context,
        'key',
        'key: is missing (the rate-limit key of this call is empty)',
      );
    }
    const cost = await resolve(context, route.cost ?? this.defaults.cost);
    const quota = route.quota ?? this.defaults.quota;
    const reply = await this.acquire(context, {
      key,
      ...(quota !== undefined && { quota }),
      ...(cost !== undefined && { cost }),
    });
    // The reply does not say its limit's window: the draft's RateLimit-Policy goes without `w`.
    if (limitDecided(reply)) {
      setHeaders(httpResponseOf(context), rateLimitHeaderList(reply, this.headers));
    }
    // Only a reply that says so admits: the client checked its shape, and the guard still reads
    // nothing but `true` as yes.
    if (reply.allowed === true) {
      this.releaseWhenAnswered(context, reply);
      return true;
    }
    throw refusal(context, reply);
  }

  /**
   * Gives a concurrency lease back once the HTTP response ends (answered, failed, or the client
   * gone), exactly once, so a concurrency quota behind the guard counts calls in progress. Other
   * contexts keep the lease until its `leaseTtlMs`.
   */
  private releaseWhenAnswered(context: ExecutionContext, reply: GuardReply): void {
    const leaseId = reply.leaseId;
    if (leaseId === undefined) return;
    onHttpResponseEnd(context, () => {
      // No limiter answering the release leaves the lease to expire at its leaseTtlMs: nothing
      // the response could still be told.
      this.limiter.release({ key: reply.key, quota: reply.quota, leaseId }).catch(() => undefined);
    });
  }

  /** The options in force for this call, or undefined when it is not limited. */
  private routeOptions(context: ExecutionContext): RateLimitRouteOptions | undefined {
    const handler = context.getHandler();
    const controller = context.getClass();
    for (const target of [handler, controller]) {
      if (this.reflector.get<boolean>(SKIP_RATE_LIMIT_METADATA, target) === true) return undefined;
      const options = this.reflector.get<RateLimitRouteOptions>(RATE_LIMIT_METADATA, target);
      if (options !== undefined) return options;
    }
    return this.defaults.key !== undefined ? {} : undefined;
  }

  private async acquire(
    context: ExecutionContext,
    request: Parameters<RateLimitClient['acquire']>[0],
  ): Promise<GuardReply> {
    try {
      return await this.limiter.acquire(request);
    } catch (error) {
      if (error instanceof InvalidRequestError) {
        throw invalidInput(context, error.field, error.reason);
      }
      // failurePolicy 'throw': the guard answers as 'closed' would.
      if (error instanceof LimiterUnavailableError)
        throw refusal(context, unavailable(request.key));
      throw error;
    }
  }
}

/**
 * Whether a limit decided the reply, so headers can describe it: as the limiter's own HTTP API,
 * not when it refused the request before any limit (invalid, unknown quota), and not for an answer
 * the client made up by failure policy (no limiter answered).
 */
function limitDecided(reply: GuardReply): boolean {
  return (
    reply.policy !== true && reply.code !== 'INVALID_REQUEST' && reply.code !== 'UNKNOWN_QUOTA'
  );
}

/** The module's `headers`, checked: a typo in plain JavaScript fails at start, not per call. */
function headerMode(value: unknown): RateLimitHeaderMode {
  if (value === undefined) return DEFAULT_RATE_LIMIT_HEADER_MODE;
  if (isRateLimitHeaderMode(value)) return value;
  const modes = RATE_LIMIT_HEADER_MODES.join(', ');
  throw new TypeError(
    `RateLimitModule headers must be one of ${modes}, got ${JSON.stringify(value)}`,
  );
}

async function resolve<T>(
  context: ExecutionContext,
  value: FromContext<T> | undefined,
): Promise<T | undefined> {
  return typeof value === 'function'
    ? await (value as (context: ExecutionContext) => T | Promise<T>)(context)
    : value;
}

/** What the guard answers when the client throws for an unanswered call: 'closed' would. */
function unavailable(key: string): GuardReply {
  return { ...undecidedReply({ key }, 'UNAVAILABLE', undefined), policy: true };
}
