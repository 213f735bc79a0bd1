import type {
  ExecutionContext,
  InjectionToken,
  ModuleMetadata,
  OptionalFactoryDependency,
} from '@nestjs/common';
import type { AcquireRequest } from '@app/contracts/messages/acquire';
import type { RateLimitHeaderMode } from '@app/contracts/headers';

export type { RateLimitHeaderMode } from '@app/contracts/headers';
import type { ConnectionOptions, NatsConnection } from 'nats';
import type { RateLimitClientOptions } from '..';

/** What a request is charged: a number of `requests`, or a cost per unit. */
export type RateLimitCost = NonNullable<AcquireRequest['cost']>;

/** A value, or a function of the call being guarded (HTTP request, GraphQL field, RPC message). */
export type FromContext<T> = T | ((context: ExecutionContext) => T | Promise<T>);

/** What `@RateLimit()` takes; each field left out falls back to the module's defaults. */
export interface RateLimitRouteOptions {
  /** The limiter quota; the limiter's own default (key match, then `default`) when unset. */
  readonly quota?: string;
  /** The limiter key: a string or a function of the context (the client IP, a header, a user id). */
  readonly key?: FromContext<string | undefined>;
  /** Default 1 request. */
  readonly cost?: FromContext<RateLimitCost>;
}

/** Client options of the module: the connection is the module's business. */
type ClientOptions = Omit<RateLimitClientOptions, 'connection'>;

/**
 * Options of `RateLimitModule`: either `servers` (the module opens a NATS connection, with the
 * `nats` options, and drains it on shutdown) or `connection` (the caller's, never closed by the
 * module); the RateLimitClient
 * options; and the guard's defaults (`quota`, `key`, `cost`). With a default `key`, a global guard
 * limits every route that has no `@RateLimit()` of its own and no `@SkipRateLimit()`.
 */
export interface RateLimitModuleOptions extends ClientOptions, RateLimitRouteOptions {
  readonly servers?: string | readonly string[];
  /** The name of the connection the module opens (shown by NATS monitoring). */
  readonly connectionName?: string;
  /**
   * nats.js options of the connection the module opens: credentials (`user`/`pass`, `token`,
   * `authenticator`), `tls`, and the `inboxPrefix` a NATS user of its own may be given
   * (docs/operations.md, NATS users and permissions).
   */
  readonly nats?: Omit<ConnectionOptions, 'servers' | 'name'>;
  readonly connection?: NatsConnection;
  /** Default true: RateLimitClient and RateLimitGuard can be injected in every module. */
  readonly global?: boolean;
  /**
   * The rate-limit headers the guard sets (docs/contract.md, Headers), as the limiter's
   * RATELIMIT_HEADERS: `legacy` (default) `RateLimit-Limit/Remaining/Reset` and `X-RateLimit-*`;
   * `draft` the structured `RateLimit-Policy` and `RateLimit` instead; `both` all of them.
   */
  readonly headers?: RateLimitHeaderMode;
}

export interface RateLimitModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  readonly inject?: (InjectionToken | OptionalFactoryDependency)[];
  readonly useFactory: (
    ...args: never[]
  ) => RateLimitModuleOptions | Promise<RateLimitModuleOptions>;
  /** Default true: RateLimitClient and RateLimitGuard can be injected in every module. */
  readonly global?: boolean;
}

/** Injection token of the resolved module options. */
export const RATE_LIMIT_MODULE_OPTIONS = Symbol('RATE_LIMIT_MODULE_OPTIONS');

/** Metadata keys of the decorators. */
export const RATE_LIMIT_METADATA = 'ratelimit:route';
export const SKIP_RATE_LIMIT_METADATA = 'ratelimit:skip';

/** Name of the connection the module opens when none is given. */
export const DEFAULT_CONNECTION_NAME = 'ratelimit-nest';
