/**
 * onStoreFailure: local with Redis unreachable (a real client dialling a port nothing listens on):
 * the replica answers from its own share, limit / LIMITER_REPLICAS, and nothing else changes that.
 */
import type { QuotaSpec } from '@app/contracts';
import { createServer } from 'node:net';
import { LimiterService } from '../apps/limiter/src/engine-host/limiter.service';
import { readLimiterSettings } from '../apps/limiter/src/settings/limiter-settings';

/** A local port with nothing listening on it (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const SHARED: QuotaSpec = {
  name: 'shared',
  match: 'shared-*',
  scope: 'cluster',
  onStoreFailure: 'local',
  limits: [{ name: 'rpd', unit: 'requests', limit: 9, windowMs: 1e15, algorithm: 'fixed_window' }],
};

describe('onStoreFailure: local while Redis is unreachable (LIMITER_REPLICAS=3)', () => {
  let limiter: LimiterService;

  beforeEach(async () => {
    const env = {
      NATS_URL: '',
      REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
      LIMITER_REPLICAS: '3',
      REDIS_TIMEOUT_MS: '200',
    };
    limiter = new LimiterService(readLimiterSettings(env));
    limiter.setQuotas([SHARED]);
  });
  afterEach(() => limiter.onModuleDestroy());

  async function admitted(key: string, n: number): Promise<number> {
    let count = 0;
    for (let i = 0; i < n; i++)
      if ((await limiter.acquire({ key, cost: { requests: 1 } })).allowed) count++;
    return count;
  }

  it('admits this replica’s share, 3 of 9', async () => {
    expect(await admitted('shared-a', 6)).toBe(3);
  });

  it('keeps decide a dry run: decides charge nothing from the share', async () => {
    for (let i = 0; i < 5; i++)
      expect((await limiter.decide({ key: 'shared-b', cost: { requests: 1 } })).allowed).toBe(true);
    expect(await admitted('shared-b', 6)).toBe(3);
  });

  it('refuses a GoCC client’s own limit for the cluster quota, keeping the share', async () => {
    expect(limiter.setKeyLimits({ key: 'shared-c', limit: 100 })).toMatchObject({
      ok: false,
      code: 'INVALID_REQUEST',
    });
    expect(await admitted('shared-c', 12)).toBe(3);
  });
});
