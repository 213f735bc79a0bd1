import type { NormalisedAcquire } from '@app/contracts';
import {
  compileQuota,
  refusal,
  type Cost,
  type Decision,
  type KeyStats,
  type QuotaSpec,
} from '@app/engine';
import { costTooBig, decisionOf, statsOf, type ClusterQuotaEntry } from './cluster-decision';
import { LeaseBook, type LeaseOptions } from './lease/lease-book';
import type { Pending } from './lease/slice';
import type { RedisPool } from './redis-pool';
import type { DecisionOp } from './redis-quota-store';

/** Answers a request by the quota's onStoreFailure policy when Redis could not decide it. */
export type StoreFailureAnswer = (
  q: QuotaSpec,
  input: NormalisedAcquire,
  requestId: string,
  op: DecisionOp,
) => Decision | Promise<Decision>;

export interface ClusterPlan {
  readonly served: ReadonlyMap<string, ClusterQuotaEntry>;
}

/** Per (quota, key) on this replica: the waiters, in arrival order. */
interface Line {
  waiting: number;
  tail: Promise<unknown>;
}

/** This replica's decisions per cluster quota, for metrics and the admin's stats. */
export interface ClusterCounts {
  approved: number;
  denied: number;
}

/** A waiter refused for concurrency asks again this often: a release on any replica frees it. */
const LEASE_POLL_MS = 25;

function whyGone(caller: AbortSignal | undefined): string {
  return caller?.aborted === true
    ? 'wait: cancelled by the caller'
    : 'wait: maxWaitMs passed before capacity freed';
}

/** Refusals a waiter sits out: capacity or a lease frees up with time or a release. */
const mayWaitOn = (d: Decision): boolean =>
  !d.allowed && (d.code === 'RATE_LIMITED' || d.code === 'CONCURRENCY_LIMITED');

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Cluster scope: quotas decided in Redis, exact across replicas (one script call per decision).
 * Waiting happens on the replica that took the request: its waiters for one (quota, key) form a
 * FIFO line, the head retries at the retryAfterMs Redis gave, within maxWaitMs; while the line is
 * not empty, newer requests of this replica never overtake it. Requests of other replicas can:
 * across replicas the order is Redis's arrival order, not a global FIFO.
 */
export class ClusterScope {
  private quotas: ReadonlyMap<string, ClusterQuotaEntry> = new Map();
  private readonly lines = new Map<string, Line>();
  private counter = 0;
  private readonly counts = new Map<string, ClusterCounts>();
  /** Decisions Redis could not make (error or timeout) since start: the degraded-mode metric. */
  failures = 0;
  lastFailure: string | undefined;
  /** Waiters' abort handles, so that shutdown can answer them all. */
  private readonly waiters = new Set<AbortController>();
  private closing = false;
  /** Capacity leases of hot keys; undefined when LEASE_HOT_RATE is 0. */
  readonly leases: LeaseBook | undefined;

  constructor(
    private readonly pool: RedisPool,
    private readonly onFailure: StoreFailureAnswer,
    private readonly idPrefix: string,
    lease?: LeaseOptions & { readonly replicas: number },
  ) {
    if (lease !== undefined && lease.hotRate > 0 && lease.maxKeys > 0) {
      this.leases = new LeaseBook(lease, idPrefix, lease.replicas, {
        storeFor: (key) => this.pool.storeFor(key),
        now: () => performance.now(),
        failed: (q, p, error) => {
          this.failed(error);
          return this.onFailure(q.spec, p.input, p.requestId, p.counted ? 'acquire' : 'wait');
        },
        again: (q, p) => this.again(q, p),
      });
    }
  }

  /**
   * The cluster quotas this scope will decide. Pure: `apply` puts the plan in force once the
   * engine accepted the same quotas (their local-fallback copies).
   */
  plan(specs: readonly QuotaSpec[]): ClusterPlan {
    const served = new Map<string, ClusterQuotaEntry>();
    for (const spec of specs) {
      if (spec.scope !== 'cluster') continue;
      const known = this.quotas.get(spec.name);
      // An unchanged quota keeps its entry: its slices and prepared script stay.
      if (known !== undefined && sameSpec(known.spec, spec)) {
        served.set(spec.name, known);
        continue;
      }
      const { limits } = compileQuota(spec);
      // A release on any replica must free a concurrency lease at once: only Redis can.
      const leasable = spec.lease !== 'off' && spec.concurrency === undefined;
      const entry = { name: spec.name, limits, concurrency: spec.concurrency, spec, leasable };
      served.set(spec.name, entry);
    }
    return { served };
  }

  apply(plan: ClusterPlan): void {
    const changed = [...this.quotas].filter(([name, q]) => plan.served.get(name) !== q);
    this.leases?.revoke(changed.map(([name]) => name));
    this.quotas = plan.served;
    for (const name of this.counts.keys()) if (!plan.served.has(name)) this.counts.delete(name);
  }

  /** This replica's approved / denied per cluster quota since start, and its waiters. */
  counters(): { quota: string; approved: number; denied: number; queued: number }[] {
    const queued = new Map<string, number>();
    for (const [lineKey, line] of this.lines) {
      const quota = lineKey.slice(0, lineKey.indexOf('\u0000'));
      queued.set(quota, (queued.get(quota) ?? 0) + line.waiting);
    }
    return [...this.quotas.keys()].map((quota) => ({
      quota,
      approved: this.counts.get(quota)?.approved ?? 0,
      denied: this.counts.get(quota)?.denied ?? 0,
      queued: queued.get(quota) ?? 0,
    }));
  }

  get size(): number {
    return this.quotas.size;
  }

  /** A client is not connected, or a node's circuit is open: onStoreFailure answers some keys. */
  get degraded(): boolean {
    return this.pool.readyCount < this.pool.size || this.openCircuits().length > 0;
  }

  /** Nodes (`host:port`) whose circuit is open: their keys are answered without asking Redis. */
  openCircuits(): string[] {
    return this.pool
      .circuits()
      .filter((c) => c.isOpen)
      .map((c) => c.node);
  }

  /** Every node's circuit so far, open or not (metrics). */
  circuits(): { node: string; open: boolean }[] {
    return this.pool.circuits().map((c) => ({ node: c.node, open: c.isOpen }));
  }

  get(name: string): ClusterQuotaEntry | undefined {
    return this.quotas.get(name);
  }

  decide(q: ClusterQuotaEntry, input: NormalisedAcquire): Decision | Promise<Decision> {
    const requestId = input.requestId ?? this.nextId();
    const tooBig = costTooBig(q, input, requestId);
    if (tooBig !== undefined) return tooBig;
    const leased = this.leasing(q, input) ? this.leases!.peek(q, input, requestId) : undefined;
    return leased ?? this.once(q, input, requestId, 'decide');
  }

  /** Sync when the key's slice decides it (a hot key), else once Redis has. */
  acquire(
    q: ClusterQuotaEntry,
    input: NormalisedAcquire,
    signal?: AbortSignal,
  ): Decision | Promise<Decision> {
    const d = this.answer(q, input, signal);
    if (!(d instanceof Promise)) return this.counted(q, d);
    return d.then((x) => this.counted(q, x));
  }

  private counted(q: ClusterQuotaEntry, d: Decision): Decision {
    this.count(q.name, d.allowed && d.shadow !== true);
    return d;
  }

  /**
   * Leased: a hot key of a leasable quota, for a request without a client requestId (whose first
   * answer must be remembered in Redis, so it is decided there).
   */
  private leasing(q: ClusterQuotaEntry, input: NormalisedAcquire): boolean {
    return this.leases !== undefined && q.leasable && input.requestId === undefined;
  }

  /** One attempt: from the key's slice, or one Redis call. */
  private attempt(
    q: ClusterQuotaEntry,
    input: NormalisedAcquire,
    requestId: string,
    op: 'acquire' | 'wait',
  ): Decision | Promise<Decision> {
    const leased = this.leasing(q, input)
      ? this.leases!.admit(q, input, requestId, op === 'acquire')
      : undefined;
    return leased ?? this.once(q, input, requestId, op);
  }

  private answer(
    q: ClusterQuotaEntry,
    input: NormalisedAcquire,
    signal: AbortSignal | undefined,
  ): Decision | Promise<Decision> {
    const requestId = input.requestId ?? this.nextId();
    // Checked once here, never again per retry: such a request can never be admitted.
    const tooBig = costTooBig(q, input, requestId);
    if (tooBig !== undefined) return tooBig;
    const queue = q.spec.queue;
    const lines = this.lines;
    const line = lines.size === 0 ? undefined : lines.get(`${q.name}\u0000${input.key}`);
    if (input.wait !== true || queue === undefined || queue.maxWaitMs <= 0) {
      if (line === undefined) return this.attempt(q, input, requestId, 'acquire');
      return this.behindWaiters(q, input, requestId, 'RATE_LIMITED', 'requests are waiting ahead');
    }
    const arrivedAt = Date.now();
    // Nobody waiting here: try at once; only a refusal joins the line.
    return line === undefined
      ? Promise.resolve(this.attempt(q, input, requestId, 'wait')).then((d) =>
          mayWaitOn(d) ? this.enqueue(q, input, requestId, arrivedAt, signal) : d,
        )
      : this.enqueue(q, input, requestId, arrivedAt, signal);
  }

  /** A request whose slice was revoked (config change) while it waited: decided afresh. */
  private again(old: ClusterQuotaEntry, p: Pending): Promise<Decision> {
    const q = this.quotas.get(old.name);
    if (q === undefined) {
      const d = refusal('UNAVAILABLE', p.requestId, p.input.key, old.name, 'quota changed');
      d.retryAfterMs = 1;
      return Promise.resolve(d);
    }
    return this.once(q, p.input, p.requestId, p.counted ? 'acquire' : 'wait');
  }

  /** Joins the (quota, key)'s line on this replica; answered admitted, timed out or cancelled. */
  private enqueue(
    q: ClusterQuotaEntry,
    input: NormalisedAcquire,
    requestId: string,
    enqueuedAt: number,
    signal: AbortSignal | undefined,
  ): Promise<Decision> {
    const queue = q.spec.queue!;
    const lineKey = `${q.name}\u0000${input.key}`;
    const line = this.lines.get(lineKey);
    if (line !== undefined && line.waiting >= queue.maxSize) {
      const full = `queue of ${queue.maxSize} is full`;
      return Promise.resolve(this.behindWaiters(q, input, requestId, 'QUEUE_FULL', full));
    }
    const budget = Math.min(input.maxWaitMs ?? queue.maxWaitMs, queue.maxWaitMs);
    const deadline = Math.min(enqueuedAt + budget, input.deadline ?? Infinity);
    const own = line ?? { waiting: 0, tail: Promise.resolve() };
    if (line === undefined) this.lines.set(lineKey, own);
    own.waiting++;
    // Aborted at the deadline or when the caller leaves. A waiter not yet at the head of its line
    // is answered at once; the head is answered by its own loop, so a charge in flight is never lost.
    const gone = new AbortController();
    this.waiters.add(gone);
    const timer = setTimeout(() => gone.abort(), Math.max(0, deadline - enqueuedAt));
    const leave = (): void => gone.abort();
    signal?.addEventListener('abort', leave, { once: true });
    let started = false;
    const answer = new Promise<Decision>((resolve) => {
      gone.signal.addEventListener(
        'abort',
        () => {
          if (!started) resolve(this.gone(q, input, requestId, signal));
        },
        { once: true },
      );
      own.tail = own.tail.then(async () => {
        if (gone.signal.aborted) return;
        started = true;
        try {
          resolve(await this.waitTurn(q, input, requestId, gone.signal, signal));
        } catch (error) {
          // Never expected (store errors are answered by the policy); the line must go on anyway.
          const d = refusal('UNAVAILABLE', requestId, input.key, q.name, String(error));
          d.retryAfterMs = 1000;
          resolve(d);
        }
      });
    });
    return answer.then((d) => {
      clearTimeout(timer);
      this.waiters.delete(gone);
      signal?.removeEventListener('abort', leave);
      own.waiting--;
      if (own.waiting === 0 && this.lines.get(lineKey) === own) this.lines.delete(lineKey);
      d.waitedMs = Math.max(0, Date.now() - enqueuedAt);
      return d;
    });
  }

  /** The head of a line: asks Redis, sleeps the retryAfterMs it answered, asks again. */
  private async waitTurn(
    q: ClusterQuotaEntry,
    input: NormalisedAcquire,
    requestId: string,
    gone: AbortSignal,
    caller: AbortSignal | undefined,
  ): Promise<Decision> {
    for (;;) {
      if (gone.aborted) return this.gone(q, input, requestId, caller);
      const d = await this.attempt(q, input, requestId, 'wait');
      if (!mayWaitOn(d)) return d;
      const lease = d.code === 'CONCURRENCY_LIMITED';
      await sleep(lease ? Math.min(d.retryAfterMs, LEASE_POLL_MS) : d.retryAfterMs, gone);
    }
  }

  /**
   * One decision in Redis; a failed or late call is answered by the quota's onStoreFailure
   * policy. Only a client's own requestId goes to Redis (its first answer is remembered there).
   */
  private async once(
    q: ClusterQuotaEntry,
    input: NormalisedAcquire,
    requestId: string,
    op: DecisionOp,
  ): Promise<Decision> {
    if (input.deadline !== undefined && input.deadline <= Date.now()) {
      return this.timeout(q, input, requestId, 'deadline: has passed');
    }
    const store = this.pool.storeFor(input.key);
    try {
      const outcome = await store.decision(op, q, input.key, input.cost, input.requestId ?? '');
      return decisionOf(q, input, requestId, outcome);
    } catch (error) {
      this.failed(error);
      return this.onFailure(q.spec, input, requestId, op);
    }
  }

  private count(quota: string, allowed: boolean): void {
    let c = this.counts.get(quota);
    if (c === undefined) this.counts.set(quota, (c = { approved: 0, denied: 0 }));
    if (allowed) c.approved++;
    else c.denied++;
  }

  private failed(error: unknown): undefined {
    this.failures++;
    this.lastFailure = error instanceof Error ? error.message : String(error);
    return undefined;
  }

  // Key operations answer undefined when Redis could not: the caller applies the failure policy.

  /** Frees a lease or gives an admitted request's cost back, on whichever replica admitted it. */
  release(
    q: ClusterQuotaEntry,
    key: string,
    requestId: string | undefined,
    leaseId: string | undefined,
  ): Promise<boolean | undefined> {
    if (requestId === undefined && leaseId === undefined) return Promise.resolve(false);
    if (this.leases?.owns(requestId) === true) {
      return this.leases.release(requestId!).catch((e: unknown) => this.failed(e));
    }
    const store = this.pool.storeFor(key);
    return store.release(q, key, requestId, leaseId).catch((e: unknown) => this.failed(e));
  }

  usage(
    q: ClusterQuotaEntry,
    key: string,
    requestId: string | undefined,
    cost: Cost,
  ): Promise<KeyStats | undefined> {
    if (this.leases?.owns(requestId) === true) {
      // Settled in its slice or in Redis; the reply is the key's stats as Redis holds them. A
      // receipt this replica no longer has is charged whole in Redis, as any unknown id is.
      const leases = this.leases;
      return leases
        .usage(requestId!, cost)
        .then((settled) =>
          settled ? this.stats(q, key) : this.usageInRedis(q, key, requestId, cost),
        )
        .catch((e: unknown) => this.failed(e));
    }
    return this.usageInRedis(q, key, requestId, cost);
  }

  private usageInRedis(
    q: ClusterQuotaEntry,
    key: string,
    requestId: string | undefined,
    cost: Cost,
  ): Promise<KeyStats | undefined> {
    return this.pool
      .storeFor(key)
      .usage(q, key, requestId, cost)
      .then((o) => statsOf(q, key, o, this.queuedOn(q.name, key)))
      .catch((e: unknown) => this.failed(e));
  }

  /** `queued` counts this replica's waiters: each replica keeps its own line. */
  stats(q: ClusterQuotaEntry, key: string): Promise<KeyStats | undefined> {
    return this.pool
      .storeFor(key)
      .stats(q, key)
      .then((o) => statsOf(q, key, o, this.queuedOn(q.name, key)))
      .catch((e: unknown) => this.failed(e));
  }

  resetKey(q: ClusterQuotaEntry, key: string): Promise<boolean | undefined> {
    return this.pool
      .storeFor(key)
      .reset(q, key)
      .catch((e: unknown) => this.failed(e));
  }

  private queuedOn(quota: string, key: string): number {
    return this.lines.get(`${quota}\u0000${key}`)?.waiting ?? 0;
  }

  /** Refused in place: waiters of this replica come first (strict FIFO), or their line is full. */
  private behindWaiters(
    q: ClusterQuotaEntry,
    input: NormalisedAcquire,
    requestId: string,
    code: 'RATE_LIMITED' | 'QUEUE_FULL',
    reason: string,
  ): Decision {
    const d = refusal(code, requestId, input.key, q.name, reason);
    d.retryAfterMs = 1;
    return d;
  }

  private timeout(
    q: ClusterQuotaEntry,
    input: NormalisedAcquire,
    requestId: string,
    reason: string,
  ): Decision {
    return refusal('WAIT_TIMEOUT', requestId, input.key, q.name, reason);
  }

  /** Requests of this replica waiting in a cluster quota's line. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Shutdown: every waiter is answered UNAVAILABLE; then the connections close. */
  async close(): Promise<void> {
    this.closing = true;
    for (const w of this.waiters) w.abort();
    // Unspent slices go back before the connections close (each call bounded by the timeout).
    await this.leases?.close();
    await this.pool.close();
  }

  private gone(
    q: ClusterQuotaEntry,
    input: NormalisedAcquire,
    requestId: string,
    caller: AbortSignal | undefined,
  ): Decision {
    if (!this.closing) return this.timeout(q, input, requestId, whyGone(caller));
    const d = refusal('UNAVAILABLE', requestId, input.key, q.name, 'the limiter is shutting down');
    d.retryAfterMs = 1000;
    return d;
  }

  private nextId(): string {
    return `${this.idPrefix}c${(this.counter++).toString(36)}`;
  }
}

/** Same quota spec: the entry (its slices, its prepared script) can stay. */
function sameSpec(a: QuotaSpec, b: QuotaSpec): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
