import { fnv1a } from '@app/engine';
import { Redis } from 'ioredis';
import { RedisQuotaStore } from './redis-quota-store';

/** How long a script call may take before the request is answered by the failure policy. */
export const STORE_TIMEOUT_MS = 500;

/**
 * The Redis servers of cluster scope (REDIS_URLS, else REDIS_URL), one store per server; a
 * (quota, key) always goes to the server FNV-1a(key) picks, so its state has one home. Commands
 * fail at once while a server is down (no offline queue): the failure policy answers instead of
 * a request waiting on a reconnect. ioredis reconnects every <= 1 s, so exact decisions are back
 * within about a second of Redis returning. A Redis Cluster URL works too: every key of one
 * (quota, key) shares a hash tag.
 */
export class RedisPool {
  private readonly clients: Redis[];
  private readonly stores: RedisQuotaStore[];

  constructor(urls: readonly string[]) {
    this.clients = urls.map(
      (url) =>
        new Redis(url, {
          enableAutoPipelining: true,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          commandTimeout: STORE_TIMEOUT_MS,
          retryStrategy: (attempt) => Math.min(100 * attempt, 1_000),
          // Errors are seen by the calls that fail; connection noise must not crash the process.
          lazyConnect: false,
        }),
    );
    for (const client of this.clients) client.on('error', () => undefined);
    this.stores = this.clients.map((c) => new RedisQuotaStore(c));
  }

  storeFor(key: string): RedisQuotaStore {
    const stores = this.stores;
    return stores.length === 1 ? stores[0]! : stores[fnv1a(key) % stores.length]!;
  }

  /** Servers that are connected and ready right now. */
  get readyCount(): number {
    return this.clients.filter((c) => c.status === 'ready').length;
  }

  /** Resolves once every server is connected, or after `timeoutMs` (false). */
  async whenReady(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.readyCount < this.size) {
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  get size(): number {
    return this.clients.length;
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.quit().catch(() => c.disconnect())));
  }
}
