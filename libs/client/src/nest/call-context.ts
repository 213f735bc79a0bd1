import type { ExecutionContext } from '@nestjs/common';

/** The parts of a Fastify or Express request the key helpers read. */
export interface HttpRequestLike {
  readonly ip?: string;
  readonly headers?: Record<string, string | string[] | undefined>;
  readonly user?: unknown;
}

/** A Fastify reply or an Express response: both take headers one at a time. */
interface HttpResponseLike {
  header?: (name: string, value: string) => unknown;
  setHeader?: (name: string, value: string) => unknown;
}

/** A GraphQL context as Mercurius (`reply`) or Apollo (`req`, `res`) builds it. */
interface GraphQlContextLike {
  readonly req?: HttpRequestLike;
  readonly request?: HttpRequestLike;
  readonly reply?: HttpResponseLike & { readonly request?: HttpRequestLike };
  readonly res?: HttpResponseLike;
}

/**
 * The HTTP request behind a call: the request itself over HTTP, the request that carried the query
 * in GraphQL; undefined in an RPC (microservice) context.
 */
export function httpRequestOf(context: ExecutionContext): HttpRequestLike | undefined {
  const type = context.getType<string>();
  if (type === 'http') return context.switchToHttp().getRequest<HttpRequestLike>();
  if (type === 'graphql') {
    const gql = graphQlContextOf(context);
    return gql?.req ?? gql?.request ?? gql?.reply?.request;
  }
  return undefined;
}

/** The response headers can be set on, over HTTP and GraphQL-over-HTTP. */
export function httpResponseOf(context: ExecutionContext): HttpResponseLike | undefined {
  const type = context.getType<string>();
  if (type === 'http') return context.switchToHttp().getResponse<HttpResponseLike>();
  if (type === 'graphql') {
    const gql = graphQlContextOf(context);
    return gql?.reply ?? gql?.res;
  }
  return undefined;
}

/** Sets each header (a flat name, value list) on a Fastify reply or an Express response. */
export function setHeaders(response: HttpResponseLike | undefined, list: readonly string[]): void {
  if (response === undefined) return;
  for (let i = 0; i + 1 < list.length; i += 2) {
    if (typeof response.header === 'function') response.header(list[i]!, list[i + 1]!);
    else if (typeof response.setHeader === 'function') response.setHeader(list[i]!, list[i + 1]!);
  }
}

/** The Node response under an HTTP call: Express's response itself, Fastify's `reply.raw`. */
interface NodeResponseLike {
  readonly destroyed?: boolean;
  readonly writableFinished?: boolean;
  once(event: 'finish' | 'close', listener: () => void): unknown;
  off(event: 'finish' | 'close', listener: () => void): unknown;
}

function isNodeResponse(value: unknown): value is NodeResponseLike {
  const candidate = value as Partial<NodeResponseLike> | null | undefined;
  return typeof candidate?.once === 'function' && typeof candidate.off === 'function';
}

/**
 * Calls `done` once when the HTTP response of the call ends: sent (the handler answered or threw),
 * or its connection closed first (the client went away); at once when it already has. Returns
 * false, without calling it, outside an HTTP context or when no Node response can be found.
 */
export function onHttpResponseEnd(context: ExecutionContext, done: () => void): boolean {
  if (context.getType<string>() !== 'http') return false;
  const response: unknown = context.switchToHttp().getResponse();
  const raw: unknown = isNodeResponse(response)
    ? response
    : (response as { raw?: unknown } | null | undefined)?.raw;
  if (!isNodeResponse(raw)) return false;
  if (raw.writableFinished === true || raw.destroyed === true) {
    done();
    return true;
  }
  const end = (): void => {
    raw.off('finish', end);
    raw.off('close', end);
    done();
  };
  raw.once('finish', end);
  raw.once('close', end);
  return true;
}

/** A resolver's arguments are (root, args, context, info). */
function graphQlContextOf(context: ExecutionContext): GraphQlContextLike | undefined {
  const gql: unknown = context.getArgByIndex(2);
  return typeof gql === 'object' && gql !== null ? gql : undefined;
}

/** Ready-made key functions for `@RateLimit({ key })`. */
export const RateLimitKeys = {
  /** The client's IP as the framework sees it (behind a proxy, configure trustProxy). */
  ip: (context: ExecutionContext): string | undefined => httpRequestOf(context)?.ip,

  /** A request header's value (the first, when sent several times). */
  header:
    (name: string) =>
    (context: ExecutionContext): string | undefined => {
      const value = httpRequestOf(context)?.headers?.[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    },
} as const;
