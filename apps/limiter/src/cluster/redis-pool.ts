import { fnv1a } from '@app/engine';
import { OncePerOutage } from '@app/logging';
import { Logger } from '@nestjs/common';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { RedisQuotaStore, type ScriptClient } from './redis-quota-store';
import { STORE_TIMEOUT_MS, withDeadline, type Circuit } from './store-circuit';

/**
 * ioredis's own command timeout is a backstop that frees what it holds: the store's deadline, which
 * runs from when a request asks, answers first. Equal to it, a command sent late in a busy turn
 * could be failed by ioredis before its reply, already in the socket, is read.
 */
const commandTimeout = (timeoutMs: number): number => 2 * timeoutMs;

/** Reconnect every <= 1 s, so exact decisions are back within about a second of Redis returning. */
const reconnectDelay = (attempt: number): number => Math.min(100 * attempt, 1_000);

/**
 * The Redis of cluster scope. Standalone (default): one client per URL of REDIS_URLS (else
 * REDIS_URL), one store each; a (quota, key) always goes to the server FNV-1a(key) picks, so its
 * state has one home. REDIS_CLUSTER=true: the URLs are seeds of one Redis Cluster, served by one
 * ioredis Cluster client and one store; the cluster routes each call by the slot of its key, so
 * the store makes one call per (quota, key) (no coalescing of keys of different slots). Commands
 * fail at once while Redis is unreachable (no offline queue, no retries within a request): the
 * failure policy answers instead of a request waiting on a reconnect. Each store bounds its calls
 * by `timeoutMs` and keeps a circuit per node (see RedisQuotaStore and Circuit).
 */
export class RedisPool {
  /** True when the URLs are seeds of one Redis Cluster: one call must not span hash tags. */
  readonly clustered: boolean;
  /**
   * Set when REDIS_CLUSTER does not match the servers: a standalone URL answered as a Redis Cluster
   * node (MOVED, CROSSSLOT, ...), or a cluster seed is not a cluster node. Logged once; with a
   * standalone URL the failed calls' errors carry the same text.
   */
  misconfiguration: string | undefined;
  private readonly clients: ScriptClient[];
  private readonly stores: RedisQuotaStore[];
  private readonly log = new Logger('Redis');

  /**
   * `tlsCa`: the CA of rediss:// servers (REDIS_TLS_CA), for servers whose certificates a private
   * CA signed; without it Node's own CAs are trusted.
   */
  constructor(
    urls: readonly string[],
    clustered = false,
    private readonly timeoutMs = STORE_TIMEOUT_MS,
    tlsCa?: Buffer,
  ) {
    this.clustered = clustered;
    if (clustered) {
      const cluster = clusterClient(urls, timeoutMs, tlsCa);
      // A standalone server refuses CLUSTER SLOTS: the client never gets ready, so say why.
      cluster.on('node error', (error: Error, node: string) => {
        if (!error.message.includes('cluster support disabled')) return;
        this.misconfigured(
          `REDIS_CLUSTER=true but ${node} is not a Redis Cluster node ("${error.message}"); ` +
            'unset REDIS_CLUSTER to use REDIS_URL/REDIS_URLS as standalone servers',
        );
      });
      this.clients = [cluster];
      this.stores = [new RedisQuotaStore(cluster, { coalesce: false, timeoutMs })];
    } else {
      const explain = (client: Redis, error: Error): Error => this.explain(client, error);
      this.clients = urls.map((url) => new StandaloneRedis(url, explain, timeoutMs, tlsCa));
      this.stores = this.clients.map((c) => new RedisQuotaStore(c, { timeoutMs }));
    }
    // Calls that fail see the errors; the client's own (a refused password, a TLS failure) are
    // logged once each until it is ready again, and must not crash the process.
    urls.forEach((url, i) => {
      const client = this.clients[i];
      if (client !== undefined) this.logConnectionErrors(client, url);
    });
  }

  storeFor(key: string): RedisQuotaStore {
    const stores = this.stores;
    return stores.length === 1 ? stores[0]! : stores[fnv1a(key) % stores.length]!;
  }

  /** Clients that are connected and ready right now (a cluster: slots known, state ok). */
  get readyCount(): number {
    return this.clients.filter((c) => c.status === 'ready').length;
  }

  /** Resolves once every client is ready, or after `timeoutMs` (false). */
  async whenReady(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.readyCount < this.size) {
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  /** Clients: one per standalone URL, or one for the whole cluster. */
  get size(): number {
    return this.clients.length;
  }

  /** Every node's circuit: one per standalone URL, one per master a cluster key went to. */
  circuits(): Circuit[] {
    return this.stores.flatMap((s) => s.circuits.list());
  }

  /** QUIT, or a plain disconnect when Redis does not answer it within the timeout (hung). */
  async close(): Promise<void> {
    for (const store of this.stores) store.circuits.stop();
    const late = (): Error => new Error('QUIT not answered');
    await Promise.all(
      this.clients.map((c) =>
        withDeadline(c.quit(), this.timeoutMs, late).catch(() => c.disconnect()),
      ),
    );
  }

  /**
   * A standalone client's error. Only a cluster-enabled server answers MOVED, ASK, CROSSSLOT or
   * CLUSTERDOWN: keys of other slots can never be served there, which only configuration fixes.
   */
  private explain(client: Redis, error: Error): Error {
    if (!CLUSTER_REPLY.test(error.message)) return error;
    const node = `${client.options.host ?? '?'}:${client.options.port ?? '?'}`;
    const message =
      `REDIS_URL/REDIS_URLS points at a Redis Cluster node (${node} answered ` +
      `"${error.message}"); set REDIS_CLUSTER=true to use it as a cluster`;
    this.misconfigured(message);
    return new Error(message, { cause: error });
  }

  private logConnectionErrors(client: ScriptClient, url: string): void {
    const { host, password } = new URL(url);
    const name = this.clustered ? `cluster (seed ${host})` : host;
    const logged = new OncePerOutage();
    client.on('ready', () => logged.up());
    client.on('error', (error: Error) => {
      // ioredis's messages carry no password; blanked all the same should one ever do.
      const secret = decodeURIComponent(password);
      const message = secret.length >= 4 ? error.message.replaceAll(secret, '***') : error.message;
      if (logged.firstTime(message)) this.log.error(`Redis ${name}: ${message}`);
    });
  }

  private misconfigured(message: string): void {
    if (this.misconfiguration !== undefined) return;
    this.misconfiguration = message;
    this.log.error(message);
  }
}

const CLUSTER_REPLY = /^(MOVED|ASK|CROSSSLOT|CLUSTERDOWN) /;

/** A standalone server's client; every failed command's error passes through `explain`. */
class StandaloneRedis extends Redis {
  constructor(
    url: string,
    private readonly explain: (client: Redis, error: Error) => Error,
    timeoutMs: number,
    tlsCa: Buffer | undefined,
  ) {
    super(url, {
      // rediss:// alone trusts Node's CAs; a private CA replaces them (ioredis keeps this `tls`).
      ...(tlsCa !== undefined && url.startsWith('rediss://') && { tls: { ca: tlsCa } }),
      // The store batches a turn's requests itself. ioredis's auto-pipeline would add nothing but
      // a wait: it writes one pipeline per connection at a time, so a call made while another is
      // unanswered waits for that one (a hung Redis: its whole timeout) before it is even written.
      enableAutoPipelining: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeout(timeoutMs),
      retryStrategy: reconnectDelay,
      lazyConnect: false,
    });
  }

  override sendCommand(...[command, stream]: Parameters<Redis['sendCommand']>): unknown {
    const reject = command.reject;
    command.reject = (error: Error) => reject.call(command, this.explain(this, error));
    return super.sendCommand(command, stream);
  }
}

/**
 * One client for a Redis Cluster. Nodes found through CLUSTER SLOTS get only `redisOptions`, so
 * credentials and TLS of the seeds (one cluster: the same for all) are carried there.
 */
function clusterClient(urls: readonly string[], timeoutMs: number, tlsCa?: Buffer): Cluster {
  const first = new URL(urls[0]!);
  const auth: Pick<RedisOptions, 'username' | 'password' | 'tls'> = {
    ...(first.username !== '' && { username: decodeURIComponent(first.username) }),
    ...(first.password !== '' && { password: decodeURIComponent(first.password) }),
    ...(first.protocol === 'rediss:' && { tls: tlsCa !== undefined ? { ca: tlsCa } : {} }),
  };
  return new Cluster(
    urls.map((u) => {
      const seed = new URL(u);
      // Bracketed IPv6 hosts are unbracketed for the socket.
      return { host: seed.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(seed.port || 6379) };
    }),
    {
      // Auto-pipelining groups a call by its first argument, which for a script call is the key
      // count, not the key: calls would be sent to the wrong node. Without it each call is routed
      // by its key's slot (and still written without waiting for earlier replies).
      enableAutoPipelining: false,
      enableOfflineQueue: false,
      clusterRetryStrategy: reconnectDelay,
      // Retrying a closed connection or CLUSTERDOWN inside a request (100 ms each, up to 16 times)
      // would outlast the command timeout; the failure policy answers and the next request retries.
      retryDelayOnFailover: 0,
      retryDelayOnClusterDown: 0,
      redisOptions: {
        ...auth,
        commandTimeout: commandTimeout(timeoutMs),
        maxRetriesPerRequest: 0,
      },
    },
  );
}
