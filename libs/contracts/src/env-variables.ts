/**
 * Every environment variable the apps read: the one list the docs, docker-compose.yml and k8s/ are
 * checked against. `Env` is keyed by these names, so reading a variable that is not listed here
 * does not compile.
 */
export type AppName = 'limiter' | 'admin';

export interface EnvVariable {
  readonly name: string;
  readonly apps: readonly AppName[];
  /** As the docs show it; `(unset)` when there is none. */
  readonly default: string;
  readonly meaning: string;
  /** A credential: set from a secret (env file, k8s Secret), never written in a committed file. */
  readonly secret?: true;
}

const both: readonly AppName[] = ['limiter', 'admin'];
const limiter: readonly AppName[] = ['limiter'];
const admin: readonly AppName[] = ['admin'];

export const ENV_VARIABLES = [
  { name: 'PORT', apps: limiter, default: '8080', meaning: 'limiter HTTP port (HTTP/1.1 and h2c)' },
  { name: 'ADMIN_PORT', apps: admin, default: '8081', meaning: 'admin HTTP and GraphQL port' },
  {
    name: 'HOST',
    apps: both,
    default: '0.0.0.0',
    meaning: 'address the HTTP server binds; the admin without ADMIN_TOKEN: 127.0.0.1',
  },
  {
    name: 'LOG_LEVEL',
    apps: both,
    default: 'info',
    meaning: 'silent, fatal, error, warn, info, debug or trace',
  },
  {
    name: 'LOG_FORMAT',
    apps: both,
    default: '`json`, or `pretty` when stdout is a terminal',
    meaning: '`json`: one JSON object per line; `pretty`: text, coloured only on a terminal',
  },
  {
    name: 'NATS_URL',
    apps: both,
    default: 'nats://127.0.0.1:4222',
    meaning: 'NATS servers, comma-separated; empty: run without NATS',
    // Its URLs may carry a user and password or a token (nats://user:password@host).
    secret: true,
  },
  {
    name: 'NATS_CREDS',
    apps: both,
    default: '(unset)',
    meaning: 'path of a NATS .creds file (user JWT and seed) to authenticate with',
  },
  {
    name: 'NATS_TOKEN',
    apps: both,
    default: '(unset)',
    meaning: 'token to authenticate to NATS with',
    secret: true,
  },
  {
    name: 'NATS_USER',
    apps: both,
    default: '(unset)',
    meaning: 'user to authenticate to NATS with (needs NATS_PASSWORD)',
  },
  {
    name: 'NATS_PASSWORD',
    apps: both,
    default: '(unset)',
    meaning: "NATS_USER's password",
    secret: true,
  },
  {
    name: 'NATS_TLS_CA',
    apps: both,
    default: '(unset)',
    meaning: "PEM file of the CA that signed the NATS servers' certificates (TLS required)",
  },
  {
    name: 'NATS_TLS_CERT',
    apps: both,
    default: '(unset)',
    meaning: 'PEM client certificate for NATS (needs NATS_TLS_KEY; TLS required)',
  },
  {
    name: 'NATS_TLS_KEY',
    apps: both,
    default: '(unset)',
    meaning: 'PEM private key of NATS_TLS_CERT, without a passphrase',
  },
  {
    name: 'NATS_SUBJECT_PREFIX',
    apps: both,
    default: 'ratelimit.v1',
    meaning: 'prefix of every subject and of the control bucket',
  },
  {
    name: 'NATS_INBOX_PREFIX',
    apps: both,
    default: '`_INBOX_limiter`; the admin `_INBOX_admin`',
    meaning: "prefix of the app's reply inboxes, which NATS permissions can keep its own",
  },
  {
    name: 'NATS_QUEUE_GROUP',
    apps: limiter,
    default: 'ratelimit-limiter',
    meaning: 'queue group the replicas share',
  },
  {
    name: 'CONTROL_SEED',
    apps: admin,
    default: '(unset)',
    meaning: 'nkeys seed the admin signs control entries and requests with; unset: unsigned',
    secret: true,
  },
  {
    name: 'CONTROL_PUBLIC_KEY',
    apps: limiter,
    default: '(unset)',
    meaning: "the admin's public key: control not signed by it is refused; unset: any",
  },
  {
    name: 'REPORT_SEED',
    apps: limiter,
    default: '(unset)',
    meaning: 'nkeys seed the limiter signs its stats reports with; unset: unsigned',
    secret: true,
  },
  {
    name: 'REPORT_PUBLIC_KEYS',
    apps: both,
    default: '(unset)',
    meaning: "comma list: the limiters' public keys whose stats reports count",
  },
  {
    name: 'MAX_REQUESTS',
    apps: both,
    default: '100',
    meaning: 'the `default` quota (GoCC): requests per window',
  },
  {
    name: 'MAX_REQUESTS_IN_QUEUE',
    apps: both,
    default: '400',
    meaning: 'the `default` quota (GoCC): waiters per key',
  },
  {
    name: 'WINDOW_MILLIS',
    apps: both,
    default: '1000',
    meaning: 'the `default` quota (GoCC): window length',
  },
  {
    name: 'REQUESTS_CAN_SET_RATE',
    apps: limiter,
    default: 'false',
    meaning: 'GoCC clients may override maxRequests',
  },
  {
    name: 'REQUESTS_CAN_MOD_QUEUE',
    apps: limiter,
    default: 'false',
    meaning: 'GoCC clients may override maxRequestsInQueue',
  },
  {
    name: 'RATELIMIT_HEADERS',
    apps: limiter,
    default: 'legacy',
    meaning: 'rate-limit headers of HTTP answers: `legacy`, `both` or `draft`',
  },
  {
    name: 'CONFIG_FILE',
    apps: limiter,
    default: '(unset)',
    meaning: 'YAML or JSON quotas (or GoCC JSON), watched and reloaded',
  },
  { name: 'DATA_DIR', apps: both, default: './data', meaning: 'where the SQLite files live' },
  { name: 'SHARDS', apps: limiter, default: '25', meaning: 'in-process actor shards' },
  {
    name: 'LIMITER_REPLICAS',
    apps: limiter,
    default: '1',
    meaning: '`onStoreFailure: local` serves limit / replicas',
  },
  {
    name: 'REDIS_URL',
    apps: limiter,
    default: '(unset)',
    meaning: 'cluster scope in Redis (redis:// or rediss://)',
    secret: true,
  },
  {
    name: 'REDIS_URLS',
    apps: limiter,
    default: '(unset)',
    meaning: 'comma list: keys spread over several Redis by FNV-1a',
    secret: true,
  },
  {
    name: 'REDIS_TLS_CA',
    apps: limiter,
    default: '(unset)',
    meaning: "PEM file of the CA that signed the Redis servers' certificates (rediss:// URLs)",
  },
  {
    name: 'REDIS_CLUSTER',
    apps: limiter,
    default: 'false',
    meaning: 'true: the Redis URLs are seed nodes of one Redis Cluster',
  },
  {
    name: 'REDIS_TIMEOUT_MS',
    apps: limiter,
    default: '500',
    meaning: 'ms a request waits on Redis before `onStoreFailure` answers',
  },
  {
    name: 'LEASE_HOT_RATE',
    apps: limiter,
    default: '50',
    meaning: 'decisions/s of one cluster key on a replica before it leases capacity; 0: never',
  },
  {
    name: 'LEASE_HORIZON_MS',
    apps: limiter,
    default: '100',
    meaning: "ms of a hot key's expected demand one lease asks for",
  },
  {
    name: 'LEASE_TTL_MS',
    apps: limiter,
    default: '1000',
    meaning: 'longest ms a leased slice may be spent; unspent units then return',
  },
  {
    name: 'LEASE_IDLE_MS',
    apps: limiter,
    default: '250',
    meaning: 'ms without requests after which a key gives its slice back',
  },
  {
    name: 'LEASE_MAX_KEYS',
    apps: limiter,
    default: '10000',
    meaning: 'keys holding a lease at once on a replica; 0: never lease',
  },
  {
    name: 'PROVIDER_SCOPE',
    apps: limiter,
    default: 'cluster with Redis, else local',
    meaning: "scope of the providers' model quotas",
  },
  {
    name: 'PROVIDER_QUEUE_SIZE',
    apps: limiter,
    default: '1000',
    meaning: 'waiters per model quota (per replica); 0: model quotas do not queue',
  },
  {
    name: 'PROVIDER_MAX_WAIT_MS',
    apps: limiter,
    default: '60000',
    meaning: "longest wait in a model quota's queue",
  },
  {
    name: 'HTTP_REQUEST_TIMEOUT_MS',
    apps: limiter,
    default: '10000',
    meaning: "ms a request's headers and body may take to arrive (408)",
  },
  {
    name: 'HTTP_MAX_CONNECTIONS',
    apps: limiter,
    default: '10000',
    meaning: 'HTTP connections open at once; more are closed',
  },
  {
    name: 'DEBUG_TOKEN',
    apps: limiter,
    default: '(unset)',
    meaning: 'bearer token `/debug`, `/debug/:key` and `/v1/stats/:key` require; unset: open',
    secret: true,
  },
  {
    name: 'DRAIN_TIMEOUT_MS',
    apps: limiter,
    default: '5000',
    meaning: 'ms requests in flight have after SIGTERM before they are cut',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    apps: limiter,
    default: '(unset)',
    meaning: 'OTLP/HTTP collector a span per acquire is sent to (`/v1/traces`); unset: no tracing',
  },
  {
    name: 'OTEL_SERVICE_NAME',
    apps: limiter,
    default: 'ratelimit-limiter',
    meaning: 'the `service.name` of the spans OTEL_EXPORTER_OTLP_ENDPOINT receives',
  },
  {
    name: 'ADMIN_TOKEN',
    apps: admin,
    default: '(unset)',
    meaning: 'bearer token for mutations; the audit log names it `admin`',
    secret: true,
  },
  {
    name: 'ADMIN_TOKENS',
    apps: admin,
    default: '(unset)',
    meaning: 'more admin tokens, `name:token,...`; the audit log names the token used',
    secret: true,
  },
  {
    name: 'ADMIN_READ_TOKEN',
    apps: admin,
    default: '(unset)',
    meaning: 'bearer token for queries, subscriptions and introspection',
    secret: true,
  },
  {
    name: 'ADMIN_READ_TOKENS',
    apps: admin,
    default: '(unset)',
    meaning: 'more read tokens, `name:token,...`',
    secret: true,
  },
  {
    name: 'ADMIN_INSECURE',
    apps: admin,
    default: 'false',
    meaning: '`true`: the admin may bind a non-loopback HOST without ADMIN_TOKEN',
  },
  {
    name: 'ADMIN_ALLOWED_ORIGINS',
    apps: admin,
    default: '(unset)',
    meaning: 'comma list of origins whose pages may call the admin besides its own',
  },
  {
    name: 'ADMIN_OPERATION_TIMEOUT_MS',
    apps: admin,
    default: '10000',
    meaning: 'a GraphQL query still waiting then answers an error',
  },
  {
    name: 'CONSOLE_DIR',
    apps: admin,
    default: '(unset)',
    meaning: "the web console's build (index.html, assets/); unset: `dist/console`",
  },
  {
    name: 'NODE_ENV',
    apps: admin,
    default: '(unset)',
    meaning: '`production`: no introspection, no GraphiQL',
  },
  // GoCC's, so that its environment starts the limiter as it is; each is named in a warning at start.
  {
    name: 'INSTANCE_URLS',
    apps: limiter,
    default: '(unset)',
    meaning: "GoCC's distributed mode: not read; use `scope: cluster` (docs/migrating.md)",
  },
  {
    name: 'SERVER_TYPE',
    apps: limiter,
    default: '(unset)',
    meaning: "GoCC's server: not read; HTTP/1.1 and h2c are both served on PORT",
  },
  ...(['LOG_2XX', 'LOG_4XX', 'LOG_5XX', 'LOG_INCLUDES_SOURCE'] as const).map((name) => ({
    name,
    apps: limiter,
    default: '(unset)',
    meaning: "GoCC's logging switch: not read; logging follows LOG_LEVEL",
  })),
] as const satisfies readonly EnvVariable[];

export type EnvName = (typeof ENV_VARIABLES)[number]['name'];

/** The environment as the apps read it: only the variables of ENV_VARIABLES. */
export type Env = { readonly [K in EnvName]?: string };
