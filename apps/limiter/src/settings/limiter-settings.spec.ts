import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makePki } from '../../../../test/support/pki';
import { DEFAULT_LEASE_SETTINGS, readLimiterSettings, readRedisCluster } from './limiter-settings';

const seed = { REDIS_URL: 'redis://a:7000' };

describe('REDIS_CLUSTER', () => {
  it.each([
    [{}, false],
    [{ REDIS_CLUSTER: '' }, false],
    [{ ...seed, REDIS_CLUSTER: 'false' }, false],
    [{ ...seed, REDIS_CLUSTER: '0' }, false],
    [{ ...seed, REDIS_CLUSTER: 'true' }, true],
    [{ ...seed, REDIS_CLUSTER: ' TRUE ' }, true],
    [{ ...seed, REDIS_CLUSTER: '1' }, true],
  ])('%j gives %s', (env, expected) => {
    expect(readLimiterSettings(env).redisCluster).toBe(expected);
    expect(readRedisCluster(env)).toBe(expected);
  });

  it('keeps the URLs as the seeds of the one cluster', () => {
    const s = readLimiterSettings({
      REDIS_CLUSTER: 'true',
      REDIS_URLS: 'redis://a:7000,redis://b:7001,redis://c:7002',
    });
    expect(s.redisUrls).toEqual(['redis://a:7000', 'redis://b:7001', 'redis://c:7002']);
  });

  it.each(['yes', 'on', 'cluster', '2'])('refuses %j naming REDIS_CLUSTER', (value) => {
    expect(() => readLimiterSettings({ ...seed, REDIS_CLUSTER: value })).toThrow(
      `REDIS_CLUSTER must be true or false, got "${value}"`,
    );
  });

  it('refuses REDIS_CLUSTER=true without REDIS_URL or REDIS_URLS', () => {
    expect(() => readLimiterSettings({ REDIS_CLUSTER: 'true' })).toThrow(
      'REDIS_CLUSTER=true needs the seed nodes in REDIS_URL or REDIS_URLS',
    );
  });
});

describe('REDIS_TIMEOUT_MS', () => {
  it('defaults to 500 ms and takes 1..60000', () => {
    expect(readLimiterSettings({}).redisTimeoutMs).toBe(500);
    expect(readLimiterSettings({ REDIS_TIMEOUT_MS: '5000' }).redisTimeoutMs).toBe(5000);
  });

  it.each(['0', '-1', '60001', '1.5', 'soon'])('refuses %s, naming the variable', (raw) => {
    expect(() => readLimiterSettings({ REDIS_TIMEOUT_MS: raw })).toThrow('REDIS_TIMEOUT_MS');
  });
});

describe('PROVIDER_SCOPE', () => {
  it.each<[Record<string, string>, string]>([
    [{}, 'local'], // no Redis: the models stay local
    [seed, 'cluster'], // Redis: a provider's limit is one limit across replicas
    [{ REDIS_URLS: 'redis://a:7000,redis://b:7001' }, 'cluster'],
    [{ ...seed, PROVIDER_SCOPE: 'local' }, 'local'], // the operator's opt-out
    [{ ...seed, PROVIDER_SCOPE: ' Local ' }, 'local'],
    [{ PROVIDER_SCOPE: 'cluster' }, 'cluster'], // decided locally, with the no-Redis warning
  ])('%j gives %s', (env, scope) => {
    expect(readLimiterSettings(env).providerScope).toBe(scope);
  });

  it.each(['global', 'true', 'redis'])('refuses %j naming PROVIDER_SCOPE', (value) => {
    expect(() => readLimiterSettings({ PROVIDER_SCOPE: value })).toThrow(
      `PROVIDER_SCOPE must be local or cluster, got "${value}"`,
    );
  });
});

describe('RATELIMIT_HEADERS', () => {
  it.each<[Record<string, string>, string]>([
    [{}, 'legacy'], // today's headers, unchanged
    [{ RATELIMIT_HEADERS: '' }, 'legacy'],
    [{ RATELIMIT_HEADERS: 'both' }, 'both'],
    [{ RATELIMIT_HEADERS: ' Draft ' }, 'draft'],
    [{ RATELIMIT_HEADERS: 'legacy' }, 'legacy'],
  ])('%j gives %s', (env, mode) => {
    expect(readLimiterSettings(env).rateLimitHeaders).toBe(mode);
  });

  it.each(['ietf', 'true', 'new'])('refuses %j naming RATELIMIT_HEADERS', (value) => {
    expect(() => readLimiterSettings({ RATELIMIT_HEADERS: value })).toThrow(
      `RATELIMIT_HEADERS must be one of legacy, both, draft, got "${value}"`,
    );
  });
});

describe('the HTTP and shutdown bounds', () => {
  it('default to a 5 s drain, a 10 s request timeout and 10 000 connections', () => {
    expect(readLimiterSettings({})).toMatchObject({
      drainTimeoutMs: 5_000,
      httpRequestTimeoutMs: 10_000,
      httpMaxConnections: 10_000,
    });
    expect(
      readLimiterSettings({
        DRAIN_TIMEOUT_MS: '20000',
        HTTP_REQUEST_TIMEOUT_MS: '2500',
        HTTP_MAX_CONNECTIONS: '50',
      }),
    ).toMatchObject({
      drainTimeoutMs: 20_000,
      httpRequestTimeoutMs: 2_500,
      httpMaxConnections: 50,
    });
  });

  it.each([
    ['DRAIN_TIMEOUT_MS', '0'],
    ['DRAIN_TIMEOUT_MS', '600001'],
    ['HTTP_REQUEST_TIMEOUT_MS', '0'],
    ['HTTP_REQUEST_TIMEOUT_MS', '10s'],
    ['HTTP_MAX_CONNECTIONS', '-5'],
  ])('refuses %s=%s, naming the variable', (name, raw) => {
    expect(() => readLimiterSettings({ [name]: raw })).toThrow(name);
  });
});

describe('DEBUG_TOKEN', () => {
  it('is unset by default, and read trimmed', () => {
    expect(readLimiterSettings({}).debugToken).toBeUndefined();
    expect(readLimiterSettings({ DEBUG_TOKEN: '  ' }).debugToken).toBeUndefined();
    expect(readLimiterSettings({ DEBUG_TOKEN: ' s3cr3t-T0ken ' }).debugToken).toBe('s3cr3t-T0ken');
  });

  it.each([['two words'], ['caf\u00e9'], ['a'.repeat(4097)]])(
    'refuses %j, naming the variable and not quoting it',
    (raw) => {
      expect(() => readLimiterSettings({ DEBUG_TOKEN: raw })).toThrow(/^DEBUG_TOKEN must be/);
      expect(() => readLimiterSettings({ DEBUG_TOKEN: raw })).not.toThrow(raw);
    },
  );
});

describe('OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME', () => {
  it('trace nothing by default or when empty', () => {
    expect(readLimiterSettings({}).otlp).toBeUndefined();
    expect(readLimiterSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }).otlp).toBeUndefined();
  });

  it("export to the endpoint's /v1/traces as ratelimit-limiter, or OTEL_SERVICE_NAME", () => {
    expect(
      readLimiterSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).otlp,
    ).toEqual({ tracesUrl: 'http://collector:4318/v1/traces', serviceName: 'ratelimit-limiter' });
    expect(
      readLimiterSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example/base',
        OTEL_SERVICE_NAME: ' limiter-eu ',
      }).otlp,
    ).toEqual({ tracesUrl: 'https://otel.example/base/v1/traces', serviceName: 'limiter-eu' });
  });

  it.each([['collector:4318'], ['grpc://collector:4317'], ['not a url']])(
    'refuses %j, naming the variable',
    (raw) => {
      expect(() => readLimiterSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: raw })).toThrow(
        /^OTEL_EXPORTER_OTLP_ENDPOINT /,
      );
    },
  );
});

describe('the LEASE_* variables', () => {
  it('default to 50 decisions/s, a 100 ms horizon, 1 s TTL, 250 ms idle and 10 000 keys', () => {
    expect(readLimiterSettings({}).lease).toEqual({
      hotRate: 50,
      horizonMs: 100,
      ttlMs: 1_000,
      idleMs: 250,
      maxKeys: 10_000,
    });
    expect(readLimiterSettings({}).lease).toEqual(DEFAULT_LEASE_SETTINGS);
  });

  it.each<[string, keyof typeof DEFAULT_LEASE_SETTINGS, string, number]>([
    ['LEASE_HOT_RATE', 'hotRate', '0', 0], // never lease
    ['LEASE_HOT_RATE', 'hotRate', '1000000', 1_000_000],
    ['LEASE_HOT_RATE', 'hotRate', ' 200 ', 200],
    ['LEASE_HORIZON_MS', 'horizonMs', '1', 1],
    ['LEASE_HORIZON_MS', 'horizonMs', '60000', 60_000],
    ['LEASE_TTL_MS', 'ttlMs', '10', 10],
    ['LEASE_TTL_MS', 'ttlMs', '60000', 60_000],
    ['LEASE_IDLE_MS', 'idleMs', '1', 1],
    ['LEASE_IDLE_MS', 'idleMs', '60000', 60_000],
    ['LEASE_MAX_KEYS', 'maxKeys', '0', 0],
    ['LEASE_MAX_KEYS', 'maxKeys', '1000000', 1_000_000],
    ['LEASE_MAX_KEYS', 'maxKeys', '', 10_000], // empty: the default
  ])('%s=%j gives %s %s', (name, field, raw, expected) => {
    expect(readLimiterSettings({ [name]: raw }).lease[field]).toBe(expected);
  });

  it.each([
    ['LEASE_HOT_RATE', '-1', '0..1000000'],
    ['LEASE_HOT_RATE', '1000001', '0..1000000'],
    ['LEASE_HOT_RATE', '2.5', '0..1000000'],
    ['LEASE_HORIZON_MS', '0', '1..60000'],
    ['LEASE_HORIZON_MS', '60001', '1..60000'],
    ['LEASE_TTL_MS', '9', '10..60000'],
    ['LEASE_TTL_MS', '60001', '10..60000'],
    ['LEASE_TTL_MS', '1s', '10..60000'],
    ['LEASE_IDLE_MS', '0', '1..60000'],
    ['LEASE_IDLE_MS', '60001', '1..60000'],
    ['LEASE_MAX_KEYS', '1000001', '0..1000000'],
    ['LEASE_MAX_KEYS', 'many', '0..1000000'],
  ])('refuses %s=%s, naming the variable and its range', (name, raw, range) => {
    expect(() => readLimiterSettings({ [name]: raw })).toThrow(
      `${name} must be an integer ${range}, got "${raw}"`,
    );
  });
});

describe('REDIS_URL and REDIS_TLS_CA', () => {
  it('names the variable of a bad URL without quoting its password', () => {
    expect(() => readLimiterSettings({ REDIS_URL: 'http://:hunter2-pw@a:6379' })).toThrow(
      'REDIS_URL must be redis:// or rediss:// URLs, got "http://***@a:6379"',
    );
  });

  it.each([
    'redis://:hunter2-pw@a:99999',
    'redis://:hunter2-pw@a^b:6379',
    'redis://:hunter2-pw@[a:6379',
    'redis://:hunter2%zz-pw@a:6379',
    'redis://a:6379,rediss://user:hunter2-pw@b:6379:1',
  ])('refuses %j naming the variable, the password quoted nowhere in the error', (url) => {
    let thrown: unknown;
    try {
      readLimiterSettings({ [url.includes(',') ? 'REDIS_URLS' : 'REDIS_URL']: url });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).message).toMatch(/^REDIS_URLS?: ".*\*\*\*@.*" is not a valid URL/);
    // Every field a log line would serialise: message, stack, and own properties such as `input`.
    const everything = JSON.stringify(thrown, Object.getOwnPropertyNames(thrown));
    expect(everything).not.toContain('hunter2');
  });

  it('reads the CA of rediss:// servers', () => {
    const dir = mkdtempSync(join(tmpdir(), 'redis-ca-'));
    try {
      const { ca } = makePki(dir);
      const settings = readLimiterSettings({ REDIS_URL: 'rediss://a:6380', REDIS_TLS_CA: ca });
      expect(settings.redisTlsCa?.toString()).toBe(readFileSync(ca, 'utf8'));
      expect(readLimiterSettings({ REDIS_URL: 'rediss://a:6380' }).redisTlsCa).toBeUndefined();
      expect(() => readLimiterSettings({ REDIS_URL: 'redis://a', REDIS_TLS_CA: ca })).toThrow(
        'REDIS_TLS_CA is set but no Redis URL is rediss:// (TLS)',
      );
      expect(() =>
        readLimiterSettings({ REDIS_URL: 'rediss://a', REDIS_TLS_CA: join(dir, 'none.pem') }),
      ).toThrow(/^REDIS_TLS_CA: cannot read .*none\.pem \(ENOENT\)$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
