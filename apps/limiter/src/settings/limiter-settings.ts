import {
  DEFAULT_NATS_INBOX_PREFIXES,
  DEFAULT_NATS_QUEUE_GROUP,
  isValidSubjectPrefix,
  listenConfig,
  parseFlag,
  parsePositiveInt,
  readCertificateFile,
  readDataDir,
  redactUrl,
  readGoccSettings,
  DEFAULT_PROVIDER_QUEUE,
  DEFAULT_RATE_LIMIT_HEADER_MODE,
  isRateLimitHeaderMode,
  MS_PER_DAY,
  RATE_LIMIT_HEADER_MODES,
  type Env,
  type EnvName,
  type GoccSettings,
  type ListenConfig,
  type QueueSpec,
  type RateLimitHeaderMode,
  type Scope,
} from '@app/contracts';
import { natsConnectionOptions } from '@app/nats-connection';
import type { ConnectionOptions } from 'nats';
import { MAX_STORE_TIMEOUT_MS, STORE_TIMEOUT_MS } from '../cluster/store-circuit';
import { readLimiterSigning, type LimiterSigning } from './limiter-signing';

export type { LimiterSigning } from './limiter-signing';

/** The limiter's environment (docs/contract.md, Environment), read once at start and validated. */
export interface LimiterSettings {
  readonly listen: ListenConfig;
  /**
   * How to reach NATS (NATS_URL, NATS_CREDS, NATS_TOKEN, NATS_USER/NATS_PASSWORD, NATS_TLS_*) and
   * the prefix of its reply inboxes (NATS_INBOX_PREFIX); undefined when NATS_URL is empty: run
   * without NATS.
   */
  readonly nats: ConnectionOptions | undefined;
  readonly subjectPrefix: string;
  readonly queueGroup: string;
  readonly gocc: GoccSettings;
  readonly requestsCanSetRate: boolean;
  readonly requestsCanModQueue: boolean;
  /** RATELIMIT_HEADERS: the legacy rate-limit headers, the draft's, or both (HTTP answers). */
  readonly rateLimitHeaders: RateLimitHeaderMode;
  readonly configFile: string | undefined;
  readonly dataDir: string;
  readonly replicas: number;
  readonly shards: number;
  /** REDIS_URLS, else REDIS_URL; empty: cluster scope is off (cluster quotas decided locally). */
  readonly redisUrls: readonly string[];
  /** REDIS_TLS_CA: the PEM of the CA that signed the servers' certificates (rediss:// URLs). */
  readonly redisTlsCa: Buffer | undefined;
  /** REDIS_CLUSTER: the URLs are seed nodes of one Redis Cluster, not servers of their own. */
  readonly redisCluster: boolean;
  /** REDIS_TIMEOUT_MS: how long a Redis call may take before onStoreFailure answers. */
  readonly redisTimeoutMs: number;
  /**
   * PROVIDER_SCOPE: the scope of providers' model quotas. Default `cluster` with Redis (a
   * provider's RPM is one limit for the whole organisation), `local` without.
   */
  readonly providerScope: Scope;
  /** PROVIDER_QUEUE_SIZE, PROVIDER_MAX_WAIT_MS: the model quotas' wait queue (none at size 0). */
  readonly providerQueue: QueueSpec | undefined;
  /** DRAIN_TIMEOUT_MS: after SIGTERM, how long requests in flight have before they are cut. */
  readonly drainTimeoutMs: number;
  /** HTTP_REQUEST_TIMEOUT_MS: a request's headers and body must arrive within this. */
  readonly httpRequestTimeoutMs: number;
  /** HTTP_MAX_CONNECTIONS: connections beyond this many open ones are closed at once. */
  readonly httpMaxConnections: number;
  /**
   * DEBUG_TOKEN: the bearer token the routes that show keys and their counts require (`/debug`,
   * `/debug/:key`, `/v1/stats/:key`); undefined: they are open.
   */
  readonly debugToken: string | undefined;
  /** LEASE_*: when and how cluster quotas' hot keys lease capacity from Redis. */
  readonly lease: LeaseSettings;
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME: where acquire spans go (OTLP/HTTP, JSON);
   * undefined: no tracing, and the OpenTelemetry SDK is not even loaded.
   */
  readonly otlp: OtlpSettings | undefined;
  /** CONTROL_PUBLIC_KEY, REPORT_SEED, REPORT_PUBLIC_KEYS (docs/operations.md, "Control keys"). */
  readonly signing: LimiterSigning;
}

/** Capacity leases of cluster scope (docs/contract.md, Environment: LEASE_*). */
export interface LeaseSettings {
  /** LEASE_HOT_RATE: decisions/s of one (quota, key) on this replica before it leases; 0: never. */
  readonly hotRate: number;
  /** LEASE_HORIZON_MS: how far ahead a lease's slice is sized for the key's demand. */
  readonly horizonMs: number;
  /** LEASE_TTL_MS: the longest a slice may be spent; Redis reclaims what is left after it. */
  readonly ttlMs: number;
  /** LEASE_IDLE_MS: a key without requests this long gives its slice back. */
  readonly idleMs: number;
  /** LEASE_MAX_KEYS: keys leasing at once on this replica; 0: never lease. */
  readonly maxKeys: number;
}

export const DEFAULT_LEASE_SETTINGS: LeaseSettings = {
  hotRate: 50,
  horizonMs: 100,
  ttlMs: 1_000,
  idleMs: 250,
  maxKeys: 10_000,
};

/** Defaults of the HTTP and shutdown bounds (docs/operations.md, "HTTP clients" and "SIGTERM"). */
export const DEFAULT_DRAIN_TIMEOUT_MS = 5_000;
export const DEFAULT_HTTP_REQUEST_TIMEOUT_MS = 10_000;
export const DEFAULT_HTTP_MAX_CONNECTIONS = 10_000;

export const LIMITER_SETTINGS = Symbol('LimiterSettings');

function flag(env: Env, name: EnvName): boolean {
  return parseFlag(name, env[name]);
}

function positiveInt(env: Env, name: EnvName, fallback: number, max: number): number {
  return parsePositiveInt(name, env[name], fallback, max);
}

export function readLimiterSettings(env: Env = process.env): LimiterSettings {
  const subjectPrefix = env['NATS_SUBJECT_PREFIX']?.trim() || 'ratelimit.v1';
  if (!isValidSubjectPrefix(subjectPrefix)) {
    throw new Error(`NATS_SUBJECT_PREFIX is not a valid subject prefix: "${subjectPrefix}"`);
  }
  const urls = redisUrls(env);
  const redisCluster = readRedisCluster(env);
  // A cluster flag with no seeds would look like cluster scope is on while it is not.
  if (redisCluster && urls.length === 0) {
    throw new Error('REDIS_CLUSTER=true needs the seed nodes in REDIS_URL or REDIS_URLS');
  }
  return {
    listen: listenConfig(env, 'PORT', 8080),
    nats: natsConnectionOptions(env, 'ratelimit-limiter', DEFAULT_NATS_INBOX_PREFIXES.limiter),
    subjectPrefix,
    queueGroup: env['NATS_QUEUE_GROUP']?.trim() || DEFAULT_NATS_QUEUE_GROUP,
    gocc: readGoccSettings(env),
    requestsCanSetRate: flag(env, 'REQUESTS_CAN_SET_RATE'),
    requestsCanModQueue: flag(env, 'REQUESTS_CAN_MOD_QUEUE'),
    rateLimitHeaders: readRateLimitHeaders(env),
    configFile: env['CONFIG_FILE']?.trim() || undefined,
    dataDir: readDataDir(env),
    replicas: positiveInt(env, 'LIMITER_REPLICAS', 1, 10_000),
    shards: positiveInt(env, 'SHARDS', 25, 4096),
    redisUrls: urls,
    redisTlsCa: readRedisTlsCa(env, urls),
    redisCluster,
    redisTimeoutMs: positiveInt(env, 'REDIS_TIMEOUT_MS', STORE_TIMEOUT_MS, MAX_STORE_TIMEOUT_MS),
    providerScope: readProviderScope(env, urls.length > 0),
    providerQueue: readProviderQueue(env),
    drainTimeoutMs: positiveInt(env, 'DRAIN_TIMEOUT_MS', DEFAULT_DRAIN_TIMEOUT_MS, 600_000),
    httpRequestTimeoutMs: positiveInt(
      env,
      'HTTP_REQUEST_TIMEOUT_MS',
      DEFAULT_HTTP_REQUEST_TIMEOUT_MS,
      600_000,
    ),
    httpMaxConnections: positiveInt(
      env,
      'HTTP_MAX_CONNECTIONS',
      DEFAULT_HTTP_MAX_CONNECTIONS,
      1_000_000,
    ),
    debugToken: readDebugToken(env),
    lease: readLeaseSettings(env),
    otlp: readOtlpSettings(env),
    signing: readLimiterSigning(env),
  };
}

/** Sent as `Authorization: Bearer <token>`: one word of visible ASCII, as a header carries it. */
function readDebugToken(env: Env): string | undefined {
  const token = env['DEBUG_TOKEN']?.trim() || undefined;
  if (token !== undefined && !/^[\x21-\x7e]{1,4096}$/.test(token)) {
    throw new Error(
      'DEBUG_TOKEN must be 1..4096 visible ASCII characters without spaces (a bearer token)',
    );
  }
  return token;
}

/** Where spans are exported, and the service they are reported as. */
export interface OtlpSettings {
  /** The endpoint's traces path: OTEL_EXPORTER_OTLP_ENDPOINT plus `/v1/traces`, as OTLP has it. */
  readonly tracesUrl: string;
  readonly serviceName: string;
}

export const DEFAULT_OTEL_SERVICE_NAME = 'ratelimit-limiter';

function readOtlpSettings(env: Env): OtlpSettings | undefined {
  const endpoint = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim();
  if (endpoint === undefined || endpoint === '') return undefined;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT is not a URL: "${endpoint}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL`);
  }
  return {
    tracesUrl: `${endpoint.replace(/\/+$/, '')}/v1/traces`,
    serviceName: env['OTEL_SERVICE_NAME']?.trim() || DEFAULT_OTEL_SERVICE_NAME,
  };
}

function readLeaseSettings(env: Env): LeaseSettings {
  const d = DEFAULT_LEASE_SETTINGS;
  const read = (name: EnvName, fallback: number, min: number, max: number) =>
    parsePositiveInt(name, env[name], fallback, max, min);
  return {
    hotRate: read('LEASE_HOT_RATE', d.hotRate, 0, 1_000_000),
    horizonMs: read('LEASE_HORIZON_MS', d.horizonMs, 1, 60_000),
    // At least 10 ms: a slice must outlive the Redis round trip that grants it.
    ttlMs: read('LEASE_TTL_MS', d.ttlMs, 10, 60_000),
    idleMs: read('LEASE_IDLE_MS', d.idleMs, 1, 60_000),
    maxKeys: read('LEASE_MAX_KEYS', d.maxKeys, 0, 1_000_000),
  };
}

function readProviderScope(env: Env, withRedis: boolean): Scope {
  const raw = env['PROVIDER_SCOPE']?.trim().toLowerCase();
  if (raw === undefined || raw === '') return withRedis ? 'cluster' : 'local';
  if (raw === 'local' || raw === 'cluster') return raw;
  throw new Error(`PROVIDER_SCOPE must be local or cluster, got "${env['PROVIDER_SCOPE']}"`);
}

function readRateLimitHeaders(env: Env): RateLimitHeaderMode {
  const raw = env['RATELIMIT_HEADERS']?.trim().toLowerCase();
  if (raw === undefined || raw === '') return DEFAULT_RATE_LIMIT_HEADER_MODE;
  if (isRateLimitHeaderMode(raw)) return raw;
  const modes = RATE_LIMIT_HEADER_MODES.join(', ');
  throw new Error(`RATELIMIT_HEADERS must be one of ${modes}, got "${env['RATELIMIT_HEADERS']}"`);
}

/** Bounds of PROVIDER_QUEUE_SIZE (waiters of one model on one replica) and PROVIDER_MAX_WAIT_MS. */
const MAX_PROVIDER_QUEUE_SIZE = 1_000_000;

function readProviderQueue(env: Env): QueueSpec | undefined {
  const { maxSize, maxWaitMs } = DEFAULT_PROVIDER_QUEUE;
  const raw = env['PROVIDER_QUEUE_SIZE'];
  const size = parsePositiveInt('PROVIDER_QUEUE_SIZE', raw, maxSize, MAX_PROVIDER_QUEUE_SIZE, 0);
  const wait = positiveInt(env, 'PROVIDER_MAX_WAIT_MS', maxWaitMs, MS_PER_DAY);
  return size === 0 ? undefined : { maxSize: size, maxWaitMs: wait };
}

/** REDIS_CLUSTER, validated like the other flags; exported for the Redis pool's default. */
export function readRedisCluster(env: Env = process.env): boolean {
  return flag(env, 'REDIS_CLUSTER');
}

function redisUrls(env: Env): string[] {
  const name = env['REDIS_URLS']?.trim() ? 'REDIS_URLS' : 'REDIS_URL';
  const urls = (env[name] ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  for (const url of urls) {
    if (!/^rediss?:\/\/[^\s]+$/.test(url)) {
      throw new Error(`${name} must be redis:// or rediss:// URLs, got "${redactUrl(url)}"`);
    }
    if (!isUrl(url)) {
      throw new Error(`${name}: "${redactUrl(url)}" is not a valid URL (host, port 0..65535)`);
    }
  }
  return urls;
}

/**
 * Checked here because the Redis clients' own parse errors quote the whole URL, password included
 * (Node's ERR_INVALID_URL carries it as `input`), and the start failure would log it.
 */
function isUrl(url: string): boolean {
  try {
    const { username, password } = new URL(url);
    decodeURIComponent(username);
    decodeURIComponent(password);
    return true;
  } catch {
    return false;
  }
}

/** A private CA for rediss:// servers; without it, Node's own CAs are trusted. */
function readRedisTlsCa(env: Env, urls: readonly string[]): Buffer | undefined {
  const path = env['REDIS_TLS_CA']?.trim();
  if (path === undefined || path === '') return undefined;
  if (!urls.some((url) => url.startsWith('rediss://'))) {
    throw new Error('REDIS_TLS_CA is set but no Redis URL is rediss:// (TLS)');
  }
  return readCertificateFile('REDIS_TLS_CA', path).pem;
}
