import {
  goccDefaultQuota,
  type BatchEntry,
  type NormalisedAcquire,
  type NormalisedRelease,
  type NormalisedStats,
  type NormalisedUsage,
} from '@app/contracts';
import {
  Engine,
  PendingAcquire,
  systemClock,
  type PreparedQuotas,
  type Clock,
  type Decision,
  type DecisionCode,
  type HeldKey,
  type KeyLimitsInput,
  type KeyLimitsView,
  type KeyListCursor,
  type KeyStats,
  type Outcome,
  type QuotaCounters,
  type QuotaSpec,
  type Scope,
} from '@app/engine';
import { Inject, Injectable, Logger, Optional, type OnModuleDestroy } from '@nestjs/common';
import type { ClusterQuotaEntry } from '../cluster/cluster-decision';
import { ClusterScope, type ClusterPlan } from '../cluster/cluster-scope';
import { keyOp, localFallback, storeFailureAnswer } from '../cluster/store-failure';
import { finishesWithin } from './deadline';
import type { MaybeAsync } from './maybe-async';
import { SHUTTING_DOWN, SHUTTING_DOWN_OUTCOME, shuttingDownDecision } from './shutting-down';
import { RedisPool } from '../cluster/redis-pool';
import type { DecisionOp } from '../cluster/redis-quota-store';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';
import { RefusedKeys } from '../control/refused-keys';

function scoped(outcome: Outcome<KeyStats>, scope: Scope): Outcome<KeyStats> {
  if (outcome.ok) outcome.value.scope = scope;
  return outcome;
}

function inRedis(stats: KeyStats | undefined): KeyStats | undefined {
  if (stats !== undefined) stats.scope = 'cluster';
  return stats;
}

/** A refusal by the quota's limits (its key is being limited), not a failure to decide. */
function limitedBy(code: DecisionCode): boolean {
  switch (code) {
    case 'RATE_LIMITED':
    case 'QUEUE_FULL':
    case 'WAIT_TIMEOUT':
    case 'CONCURRENCY_LIMITED':
    case 'COST_EXCEEDS_LIMIT':
      return true;
    default:
      return false;
  }
}

/** Told of every answered acquire (metrics); `seconds` runs from arrival to the answer. */
export interface DecisionObserver {
  decided(quota: string, code: DecisionCode, seconds: number): void;
}

export const CLOCK = Symbol('Clock');

/** When the drain began (performance.now) and how many waiters it answered. */
export interface DrainStart {
  readonly startedAt: number;
  readonly waiters: number;
}

/** Idle keys are swept at least this often even when no waiter needs a precise wake-up. */
const SWEEP_MS = 250;
/** setQuotasInSlices: the longest a slice of compiling holds the event loop, give or take a step. */
const QUOTA_SLICE_MS = 4;
/** Quotas compiled between two looks at the time (a few µs each; a regex up to ~0.5 ms). */
const QUOTA_STEP = 8;

/** A quota set on its way into force. */
interface QuotaChange {
  /** The set as configured, `default` first. */
  readonly next: QuotaSpec[];
  readonly plan: ClusterPlan | undefined;
  readonly prepared: PreparedQuotas;
}

/** Runs `prepared`'s steps for about `ms`; true once it is ready. */
function stepFor(prepared: PreparedQuotas, ms: number): boolean {
  const until = performance.now() + ms;
  for (;;) {
    if (prepared.step(QUOTA_STEP)) return true;
    if (performance.now() >= until) return false;
  }
}

/**
 * The one owner of the engine in this process. Transports (HTTP, NATS) delegate here; this class
 * reads the clock once per request, keeps one timer for the engine's next wake-up, turns waiters
 * into promises (cancelled when the caller goes away) and answers everyone on shutdown.
 */
@Injectable()
export class LimiterService implements OnModuleDestroy {
  readonly engine: Engine;
  private base: QuotaSpec[];
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Infinity;
  /** Set by drain(): from then on every operation answers UNAVAILABLE. */
  private drainDeadline: number | undefined;
  private drainStarted: DrainStart | undefined;
  private readonly drainListeners: (() => void)[] = [];
  private readonly observers: DecisionObserver[] = [];
  private changes = 0;
  /** Quota sets put in force: a set prepared in slices is stale once this moved. */
  private quotaSets = 0;
  /** Cluster scope, when REDIS_URL(S) is set: those quotas are decided in Redis. */
  readonly cluster: ClusterScope | undefined;
  private readonly log = new Logger('Limiter');
  /** The keys each quota refuses most, local and cluster alike; each stats report takes them. */
  readonly refusedKeys = new RefusedKeys();

  constructor(
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
    @Optional() @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {
    this.base = [goccDefaultQuota(settings.gocc)];
    this.engine = new Engine(this.base, { shards: settings.shards });
    if (settings.redisUrls.length > 0) {
      this.cluster = new ClusterScope(
        new RedisPool(
          settings.redisUrls,
          settings.redisCluster,
          settings.redisTimeoutMs,
          settings.redisTlsCa,
        ),
        storeFailureAnswer((input, op) => this.decideLocally(input, op)),
        `${Math.random().toString(36).slice(2, 8)}.`,
        { ...settings.lease, replicas: settings.replicas },
      );
    }
    this.arm(this.clock.now() + SWEEP_MS);
  }

  /**
   * Counts changes to the engine's state that no decision counter shows (release, usage, reset,
   * quota changes), so persistence can tell "nothing changed" from counters plus this number.
   */
  get revision(): number {
    return this.changes;
  }

  observe(observer: DecisionObserver): void {
    this.observers.push(observer);
  }

  /** Replaces the configured quotas (config file, admin). Throws InvalidQuotaError, changing nothing. */
  setQuotas(quotas: readonly QuotaSpec[]): void {
    const change = this.quotaChange(quotas);
    change.prepared.step(Infinity);
    this.commit(change);
  }

  /**
   * setQuotas without holding the event loop however many quotas there are: the set is
   * validated, compiled and indexed in slices of about QUOTA_SLICE_MS between requests, then put
   * in force at once (Engine.prepareQuotas). Rejects with InvalidQuotaError, changing nothing.
   * Resolves false, changing nothing, when another set was put in force meanwhile: the caller
   * composes its set again from the layers as they are now.
   */
  async setQuotasInSlices(quotas: readonly QuotaSpec[]): Promise<boolean> {
    const version = this.quotaSets;
    const change = this.quotaChange(quotas);
    while (!stepFor(change.prepared, QUOTA_SLICE_MS)) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.quotaSets !== version) return false;
    }
    if (this.quotaSets !== version) return false;
    this.commit(change);
    return true;
  }

  private quotaChange(quotas: readonly QuotaSpec[]): QuotaChange {
    const next = quotas.some((q) => q.name === 'default')
      ? [...quotas]
      : [goccDefaultQuota(this.settings.gocc), ...quotas];
    // With Redis, the engine holds cluster quotas at limit / LIMITER_REPLICAS: onStoreFailure: local.
    const plan = this.cluster?.plan(next);
    const local =
      plan === undefined
        ? next
        : next.map((q) => (plan.served.has(q.name) ? localFallback(q, this.settings.replicas) : q));
    return { next, plan, prepared: this.engine.prepareQuotas(local) };
  }

  private commit({ next, plan, prepared }: QuotaChange): void {
    this.engine.commitQuotas(prepared, this.clock.now());
    if (plan !== undefined) this.cluster!.apply(plan);
    this.base = next;
    this.changes++;
    this.quotaSets++;
  }

  quotas(): QuotaSpec[] {
    return this.base;
  }

  get isClosing(): boolean {
    return this.drainDeadline !== undefined;
  }

  /** Decides one request; a request that waits resolves later, in FIFO order, or on `signal`. */
  acquire(input: NormalisedAcquire, signal?: AbortSignal): Decision | Promise<Decision> {
    const started = performance.now();
    if (this.isClosing) return this.report(shuttingDownDecision(input), started);
    const clustered = this.clusterEntry(input.quota, input.key);
    if (clustered !== undefined) {
      const d = this.cluster!.acquire(clustered, input, signal);
      // A hot key's slice decides at once: a batch of such keys stays synchronous.
      if (!(d instanceof Promise)) return this.report(d, started);
      return d.then((x) => this.report(x, started));
    }
    const now = this.clock.now();
    const answer = this.engine.acquire(input, now);
    if (!(answer instanceof PendingAcquire)) return this.report(answer, started);
    this.arm(this.engine.nextWakeAt());
    if (signal !== undefined) {
      const cancel = (): void => {
        answer.cancel(this.clock.now());
      };
      if (signal.aborted) cancel();
      else signal.addEventListener('abort', cancel, { once: true });
    }
    return answer.result.then((d) => this.report(d, started));
  }

  decide(input: NormalisedAcquire): Decision | Promise<Decision> {
    if (this.isClosing) return shuttingDownDecision(input);
    const clustered = this.clusterEntry(input.quota, input.key);
    if (clustered !== undefined) return this.cluster!.decide(clustered, input);
    return this.engine.decide(input, this.clock.now());
  }

  /** The cluster quota that serves (quota, key), if any; costs nothing while none is configured. */
  private clusterEntry(quota: string | undefined, key: string): ClusterQuotaEntry | undefined {
    const cluster = this.cluster;
    if (cluster === undefined || cluster.size === 0) return undefined;
    const spec = this.engine.resolve(quota, key);
    return spec === undefined ? undefined : cluster.get(spec.name);
  }

  /**
   * onStoreFailure: local — the engine's copy of the quota, at limit / LIMITER_REPLICAS; a decide
   * stays a dry run there too.
   */
  private decideLocally(input: NormalisedAcquire, op: DecisionOp): Decision | Promise<Decision> {
    if (op === 'decide') return this.engine.decide(input, this.clock.now());
    const answer = this.engine.acquire(input, this.clock.now());
    if (!(answer instanceof PendingAcquire)) return answer;
    this.arm(this.engine.nextWakeAt());
    return answer.result;
  }

  /**
   * A batch never waits; entries that failed validation keep their place as INVALID_REQUEST.
   * A batch that touches a cluster quota answers once Redis has decided every entry.
   */
  batch(
    entries: readonly BatchEntry[],
    invalid: (failure: BatchEntry & { ok: false }, index: number) => Decision,
  ): Decision[] | Promise<Decision[]> {
    const replies = new Array<Decision | Promise<Decision>>(entries.length);
    let pending = false;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (!entry.ok) {
        replies[i] = invalid(entry, i);
      } else if (entry.value.wait === true) {
        // The contracts refuse this already; kept so a batch can never hold a waiter.
        const field = `requests[${i}].wait`;
        replies[i] = invalid({ ok: false, field, reason: `${field}: a batch never waits` }, i);
      } else {
        // Passed as parsed (no copy): the hot path of a batch is 100 of these.
        const answer = this.acquire(entry.value);
        if (answer instanceof Promise) pending = true;
        replies[i] = answer;
      }
    }
    return pending ? Promise.all(replies.map(async (r) => r)) : (replies as Decision[]);
  }

  // Cluster quotas live in Redis; when Redis cannot answer, onStoreFailure: local acts on this
  // replica's share, the other policies answer UNAVAILABLE (nothing is silently dropped).

  release(input: NormalisedRelease): MaybeAsync<Outcome<boolean>> {
    this.changes++;
    return this.onKey(
      input,
      () => this.engine.release(input, this.clock.now()),
      (cluster, q) => cluster.release(q, input.key, input.requestId, input.leaseId),
    );
  }

  usage(input: NormalisedUsage): MaybeAsync<Outcome<KeyStats>> {
    this.changes++;
    return this.onKey(
      input,
      () => scoped(this.engine.usage(input, this.clock.now()), 'local'),
      (cluster, q) =>
        cluster.usage(q, input.key, input.requestId, input.cost).then((v) => inRedis(v)),
    );
  }

  /** A key's counts, with the scope they live in: Redis, or this replica's memory. */
  stats(input: NormalisedStats): MaybeAsync<Outcome<KeyStats>> {
    return this.onKey(
      input,
      () => scoped(this.engine.stats(input, this.clock.now()), 'local'),
      (cluster, q) => cluster.stats(q, input.key).then((v) => inRedis(v)),
    );
  }

  /**
   * Where this replica decides the quota named `name`: `cluster` when Redis does, else `local` (a
   * `scope: cluster` quota without REDIS_URL too: each replica then admits up to its limit).
   */
  scopeOf(name: string): Scope {
    return this.cluster?.get(name) !== undefined ? 'cluster' : 'local';
  }

  resetKey(input: NormalisedStats): MaybeAsync<Outcome<boolean>> {
    this.changes++;
    return this.onKey(
      input,
      () => this.engine.reset(input, this.clock.now()),
      (cluster, q) => cluster.resetKey(q, input.key),
    );
  }

  /**
   * A key operation: in the engine, or in Redis for a cluster quota (undefined: Redis failed).
   * Refused while draining: what it changed would not be in the last write of usage.
   */
  private onKey<T>(
    input: { readonly quota?: string; readonly key: string },
    local: () => Outcome<T>,
    remote: (cluster: ClusterScope, q: ClusterQuotaEntry) => Promise<T | undefined>,
  ): MaybeAsync<Outcome<T>> {
    if (this.isClosing) return SHUTTING_DOWN_OUTCOME;
    const q = this.clusterEntry(input.quota, input.key);
    if (q === undefined) return local();
    return remote(this.cluster!, q).then((v) => keyOp(q.spec, v, local));
  }

  /** Per quota, this replica's counts: cluster quotas add what Redis decided here. */
  counters(): QuotaCounters[] {
    const all = this.engine.counters();
    if (this.cluster === undefined) return all;
    const byName = new Map(all.map((c) => [c.quota, c]));
    for (const c of this.cluster.counters()) {
      const mine = byName.get(c.quota);
      if (mine === undefined) continue;
      mine.approved += c.approved;
      mine.denied += c.denied;
      mine.queued += c.queued;
    }
    return all;
  }

  /**
   * GoCC's client overrides: the key's own limit and queue size, changed in place in its quota
   * (Engine.setKeyLimits). Refused for a quota Redis decides: its state there holds counts only,
   * and every replica's script and local fallback would have to agree on each key's numbers.
   */
  setKeyLimits(input: KeyLimitsInput): Outcome<KeyLimitsView> {
    if (this.isClosing) return SHUTTING_DOWN_OUTCOME;
    const clustered = this.clusterEntry(input.quota, input.key);
    if (clustered !== undefined) {
      const field = input.limit !== undefined ? 'limit' : 'queueSize';
      return {
        ok: false,
        code: 'INVALID_REQUEST',
        reason:
          `${field}: quota ${JSON.stringify(clustered.name)} is decided in Redis (scope: cluster), ` +
          'where a key has no limits of its own; change the quota instead',
      };
    }
    this.changes++;
    return this.engine.setKeyLimits(input, this.clock.now());
  }

  /** One page of the keys this replica's engine holds (GoCC's `GET /debug`); bounded work. */
  listKeys(
    maxKeys: number,
    from?: KeyListCursor,
  ): { keys: HeldKey[]; next: KeyListCursor | undefined } {
    return this.engine.listKeys(maxKeys, this.clock.now(), from);
  }

  /**
   * The limits `key` is decided by (GoCC's debug view): its quota's as configured (a cluster
   * quota's, not this replica's share of it), or the key's own. Undefined: no quota serves it.
   */
  keyLimits(key: string, quota?: string): KeyLimitsView | undefined {
    const clustered = this.clusterEntry(quota, key);
    if (clustered !== undefined) return { spec: clustered.spec, own: false };
    const view = this.engine.limitsOf(quota === undefined ? { key } : { key, quota });
    return view.ok ? view.value : undefined;
  }

  /** The quota that serves `key`: the one named, else the one matching, else `default`. */
  quotaSpecFor(key: string, quota?: string): QuotaSpec | undefined {
    return this.engine.resolve(quota, key);
  }

  /** `listener` runs once, when the drain starts (the transports stop accepting then). */
  onDrain(listener: () => void): void {
    this.drainListeners.push(listener);
  }

  /**
   * SIGTERM: stops taking requests (every operation answers UNAVAILABLE from now on), tells the
   * drain listeners, and answers every waiter. Returns the instant (epoch ms) by which the
   * transports must have answered or closed what is still in flight: DRAIN_TIMEOUT_MS after the
   * first call; later calls get the same instant.
   */
  drain(): number {
    if (this.drainDeadline !== undefined) return this.drainDeadline;
    this.drainDeadline = Date.now() + this.settings.drainTimeoutMs;
    this.drainStarted = {
      startedAt: performance.now(),
      waiters: this.engine.footprint().waiters + (this.cluster?.waiting ?? 0),
    };
    for (const listener of this.drainListeners) {
      try {
        listener();
      } catch (error) {
        this.log.error(`drain listener failed: ${String(error)}`);
      }
    }
    this.engine.drain(this.clock.now(), 'UNAVAILABLE', SHUTTING_DOWN);
    return this.drainDeadline;
  }

  /** For the shutdown line; undefined until the drain begins. */
  get drained(): DrainStart | undefined {
    return this.drainStarted;
  }

  async onModuleDestroy(): Promise<void> {
    const deadline = this.drain();
    // Answers cluster waiters at once, then quits Redis politely; a hung Redis must not hold
    // the shutdown past its deadline (the process exits, which closes the sockets anyway).
    if (this.cluster !== undefined) {
      await finishesWithin(this.cluster.close(), deadline - Date.now());
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = -Infinity; // never re-arm after shutdown
  }

  /** Every answered acquire passes here, local or cluster, at once or after waiting. */
  private report(d: Decision, started: number): Decision {
    if (!d.allowed && limitedBy(d.code)) this.refusedKeys.refused(d.quota, d.key);
    if (this.observers.length > 0) {
      const seconds = (performance.now() - started) / 1000;
      for (const o of this.observers) o.decided(d.quota, d.code, seconds);
    }
    return d;
  }

  /** One timer for the whole engine: the earliest of its next wake-up and the sweep interval. */
  private arm(at: number): void {
    if (at >= this.armedAt) return;
    clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = setTimeout(() => this.tick(), Math.max(1, at - this.clock.now()));
    this.timer.unref();
  }

  private tick(): void {
    this.armedAt = Infinity;
    this.timer = undefined;
    const now = this.clock.now();
    this.engine.advance(now);
    this.arm(Math.max(now + 1, Math.min(this.engine.nextWakeAt(), now + SWEEP_MS)));
  }
}
