/** HTTP routes, query parameters and header names (docs/contract.md, HTTP; Fastify path syntax). */

/** GoCC-compatible routes. */
export const GOCC_ROUTES = {
  /** POST or GET: acquire one request for `key`. */
  rate: '/rate/:key',
  /** DELETE: release a request admitted earlier. */
  release: '/rate/:key/:requestId',
  /** GET: GoCC's debug view of one key. */
  debug: '/debug/:key',
  /** GET: GoCC's listing of the keys held, paged with `?limit=&cursor=`. */
  debugList: '/debug',
} as const;

export const GOCC_QUERY = {
  canWait: 'canWait',
  maxRequests: 'maxRequests',
  maxRequestsInQueue: 'maxRequestsInQueue',
} as const;

export const DEBUG_LIST_QUERY = { limit: 'limit', cursor: 'cursor' } as const;

/** JSON API routes. */
export const API_ROUTES = {
  acquire: '/v1/acquire',
  acquireBatch: '/v1/acquire/batch',
  decide: '/v1/decide',
  release: '/v1/release',
  usage: '/v1/usage',
  /** GET, with `?quota=`. */
  stats: '/v1/stats/:key',
} as const;

export const STATS_QUERY = { quota: 'quota' } as const;

export const OPERATIONS_ROUTES = {
  health: '/healthz',
  ready: '/readyz',
  metrics: '/metrics',
} as const;

/** The admin's routes (port ADMIN_PORT). */
export const ADMIN_ROUTES = {
  /** POST: queries and mutations; GET: queries, and graphql-ws subscriptions (an upgrade). */
  graphql: '/graphql',
  /** GraphiQL and its files below it, outside production (apps/admin/src/graphiql). */
  graphiql: '/graphiql',
  /** The web console's page (apps/admin/src/console), in production too. */
  console: '/',
  /** The console's files, `/assets/<name>-<hash>.<ext>`, cached for good. */
  consoleAssets: '/assets',
  health: '/healthz',
  /** 200 once NATS is connected (or NATS_URL is empty), else 503 with the reason. */
  ready: '/readyz',
} as const;

export const HEADERS = {
  rateLimitLimit: 'RateLimit-Limit',
  rateLimitRemaining: 'RateLimit-Remaining',
  rateLimitReset: 'RateLimit-Reset',
  xRateLimitLimit: 'X-RateLimit-Limit',
  xRateLimitRemaining: 'X-RateLimit-Remaining',
  xRateLimitReset: 'X-RateLimit-Reset',
  /** draft-ietf-httpapi-ratelimit-headers-10, with RATELIMIT_HEADERS both or draft. */
  rateLimitPolicy: 'RateLimit-Policy',
  rateLimit: 'RateLimit',
  retryAfter: 'Retry-After',
  xRateLimitRetryAfter: 'X-RateLimit-Retry-After',
  correlationId: 'X-Correlation-ID',
} as const;

/** Request headers the admin reads (on HTTP, or in graphql-ws's connectionParams). */
export const ADMIN_HEADERS = {
  /** `Bearer <token>`: ADMIN_TOKEN(S) or ADMIN_READ_TOKEN(S). */
  authorization: 'Authorization',
} as const;
