import type { NormalisedAcquire } from '@app/contracts';
import { costFor, fnv1a, type Cost, type Decision } from '@app/engine';
import type { ClusterQuotaEntry } from '../cluster-decision';
import type { ClusterOutcome, LeaseAsk, LeaseGrant } from '../redis-quota-store';
import { HotKeys } from './hot-keys';
import { Slice, type Pending } from './slice';

/** LEASE_* (docs/contract.md): when a key is hot, how long slices live, how many keys lease. */
export interface LeaseOptions {
  readonly hotRate: number;
  readonly horizonMs: number;
  readonly ttlMs: number;
  readonly idleMs: number;
  readonly maxKeys: number;
}

/** What the book needs of a store: the two lease ops of driver.lua. */
export interface LeaseStore {
  lease(q: ClusterQuotaEntry, key: string, ask: LeaseAsk): Promise<LeaseGrant>;
  settle(
    q: ClusterQuotaEntry,
    key: string,
    chargedAt: number,
    until: readonly number[],
    delta: readonly number[],
  ): Promise<ClusterOutcome>;
}

export interface LeaseHost {
  storeFor(key: string): LeaseStore;
  /** This process's monotonic clock, ms. */
  now(): number;
  /** Requests of a grant that failed: answered by the quota's onStoreFailure policy. */
  failed(q: ClusterQuotaEntry, p: Pending, error: unknown): Decision | Promise<Decision>;
  /** Requests of a slice revoked while they waited for it: decided one by one again. */
  again(q: ClusterQuotaEntry, p: Pending): Promise<Decision>;
}

/** Since start (metrics): grants, units granted and given back, decisions made from slices. */
export interface LeaseCounters {
  grants: number;
  granted: number;
  returned: number;
  admitted: number;
  refused: number;
}

/** Local receipts of leased admissions: release and usage settle on the admitting replica. */
const RECEIPTS = 1 << 16;

/**
 * This replica's capacity leases, per (quota, key): a hot key's requests are decided here from a
 * slice charged in Redis (docs/architecture.md, "Capacity leases"). One grant call at a time per
 * key; requests that arrive meanwhile wait for it in arrival order.
 */
export class LeaseBook {
  private readonly slices = new Map<string, Map<string, Slice>>();
  private readonly seeds = new Map<string, number>();
  private readonly hot: HotKeys;
  private count = 0;
  private next = 0;
  private readonly receiptIds = new Float64Array(RECEIPTS).fill(-1);
  private readonly receiptSeqs = new Float64Array(RECEIPTS);
  private readonly receiptSlices = new Array<Slice | undefined>(RECEIPTS);
  private readonly receiptCosts = new Array<Cost | undefined>(RECEIPTS);
  private readonly receiptAt = new Float64Array(RECEIPTS);
  private readonly receiptUntil = new Array<readonly number[] | undefined>(RECEIPTS);
  private readonly sweeper: NodeJS.Timeout | undefined;
  /** Grant calls in flight: shutdown waits for them, then gives their slices back. */
  private readonly asks = new Set<Promise<void>>();
  private closed = false;
  readonly counters: LeaseCounters = {
    grants: 0,
    granted: 0,
    returned: 0,
    admitted: 0,
    refused: 0,
  };

  constructor(
    private readonly options: LeaseOptions,
    /** This replica's name in Redis's grant records and the prefix of its admission ids. */
    private readonly holder: string,
    private readonly replicas: number,
    private readonly host: LeaseHost,
    sweep = true,
  ) {
    this.hot = new HotKeys(options.hotRate, host.now());
    if (sweep) {
      const every = Math.max(10, Math.min(100, Math.floor(options.idleMs / 2)));
      this.sweeper = setInterval(() => this.sweep(), every);
      this.sweeper.unref();
    }
  }

  get keys(): number {
    return this.count;
  }

  /**
   * Decides from the key's slice: a Decision now, a Promise when a grant is asked first, or
   * undefined when the key is not leased (decided in Redis, request by request).
   */
  admit(
    q: ClusterQuotaEntry,
    input: NormalisedAcquire,
    requestId: string,
    counted = true,
  ): Decision | Promise<Decision> | undefined {
    const now = this.host.now();
    let slice = this.slices.get(q.name)?.get(input.key);
    if (slice === undefined) {
      if (this.count >= this.options.maxKeys) return undefined;
      if (!this.hot.touch(this.hashOf(q.name, input.key), now)) return undefined;
      slice = this.add(q, input.key, now);
    }
    slice.lastUsed = now;
    slice.offer(input);
    if (slice.pending.length === 0) {
      const d = this.fromSlice(slice, input, requestId, counted, now);
      if (d !== undefined) return d;
    }
    // Costing nothing, it needs no grant: asked for, an empty one would be asked for again forever.
    if (slice.q.limits.every((l) => costFor(input.cost, l.unit) === 0)) return undefined;
    return new Promise<Decision>((resolve) => {
      slice.pending.push({ input, requestId, counted, resolve });
      if (!slice.asking) this.ask(slice, now);
    });
  }

  /** A dry run: what the slice would answer now, or undefined (ask Redis). */
  peek(q: ClusterQuotaEntry, input: NormalisedAcquire, requestId: string): Decision | undefined {
    const slice = this.slices.get(q.name)?.get(input.key);
    if (slice === undefined || slice.pending.length > 0) return undefined;
    const now = this.host.now();
    if (slice.covers(input, now)) return slice.admitted(input, requestId, now);
    return now < slice.refusedUntil ? slice.refused(input, requestId, now) : undefined;
  }

  /** Whether `requestId` names an admission of this book (else Redis knows it, or nobody). */
  owns(requestId: string | undefined): boolean {
    return requestId !== undefined && requestId.startsWith(`${this.holder}l`);
  }

  /**
   * Gives a leased admission's cost back: into its slice while that grant lives, else into Redis
   * where the grant charged it. False when the receipt is gone or was released already.
   */
  async release(requestId: string): Promise<boolean> {
    const slot = this.receiptOf(requestId);
    if (slot < 0) return false;
    const slice = this.receiptSlices[slot]!;
    const cost = this.receiptCosts[slot];
    this.receiptIds[slot] = -1;
    const back = slice.q.limits.map((l) => -costFor(cost, l.unit));
    await this.adjust(slice, slot, back);
    return true;
  }

  /**
   * Settles a leased admission to its actual cost: the difference is taken from or returned to
   * its slice while its grant lives, else charged or given back in Redis. False: not ours.
   */
  async usage(requestId: string, cost: Cost): Promise<boolean> {
    const slot = this.receiptOf(requestId);
    if (slot < 0) return false;
    const slice = this.receiptSlices[slot]!;
    const was = this.receiptCosts[slot];
    this.receiptCosts[slot] = cost;
    const delta = slice.q.limits.map((l) => costFor(cost, l.unit) - costFor(was, l.unit));
    await this.adjust(slice, slot, delta);
    return true;
  }

  /** Config changed: slices of these quotas end (their units stay charged: under, never over). */
  revoke(quotas: Iterable<string>): void {
    for (const name of quotas) {
      const keys = this.slices.get(name);
      if (keys === undefined) continue;
      for (const slice of keys.values()) {
        slice.revoked = true;
        slice.clear();
      }
      this.count -= keys.size;
      this.slices.delete(name);
    }
  }

  /** Shutdown: every slice's unspent units go back to Redis (bounded by the store's timeout). */
  async close(): Promise<void> {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.closed = true;
    // A grant in flight is served to its requests, then given back with the others.
    await Promise.allSettled([...this.asks]);
    const calls: Promise<unknown>[] = [];
    for (const keys of this.slices.values()) {
      for (const slice of keys.values()) {
        if (!slice.asking) calls.push(this.giveBack(slice));
      }
    }
    this.slices.clear();
    this.count = 0;
    await Promise.allSettled(calls);
  }

  /** Slices idle for LEASE_IDLE_MS give their units back and leave the book. */
  sweep(): void {
    const now = this.host.now();
    for (const [name, keys] of this.slices) {
      for (const [key, slice] of keys) {
        if (slice.asking || slice.pending.length > 0) continue;
        if (now - slice.lastUsed < this.options.idleMs) continue;
        keys.delete(key);
        this.count--;
        void this.giveBack(slice);
      }
      if (keys.size === 0) this.slices.delete(name);
    }
  }

  private fromSlice(
    slice: Slice,
    input: NormalisedAcquire,
    requestId: string,
    counted: boolean,
    now: number,
  ): Decision | undefined {
    if (slice.spend(input, now)) {
      slice.approved++;
      this.counters.admitted++;
      const id = this.receipt(slice, input);
      return slice.admitted(input, input.requestId ?? id, now);
    }
    if (now < slice.refusedUntil) {
      if (counted) slice.denied++;
      this.counters.refused++;
      return slice.refused(input, requestId, now);
    }
    return undefined;
  }

  private add(q: ClusterQuotaEntry, key: string, now: number): Slice {
    let keys = this.slices.get(q.name);
    if (keys === undefined) this.slices.set(q.name, (keys = new Map<string, Slice>()));
    const slice = new Slice(q, key, now);
    keys.set(key, slice);
    this.count++;
    return slice;
  }

  private hashOf(quota: string, key: string): number {
    let seed = this.seeds.get(quota);
    if (seed === undefined) this.seeds.set(quota, (seed = fnv1a(quota)));
    return fnv1a(key, seed);
  }

  /** Asks Redis for a new slice for the head of the line; the old one goes back with it. */
  private ask(slice: Slice, now: number): void {
    slice.asking = true;
    const n = slice.limits;
    const ls = slice.q.limits;
    const need: number[] = [];
    const want: number[] = [];
    const elapsed = Math.max(1, now - slice.askedAt);
    for (let i = 0; i < n; i++) {
      const unit = ls[i]!.unit;
      let queued = 0;
      for (const p of slice.pending) queued += costFor(p.input.cost, unit);
      need.push(costFor(slice.pending[0]?.input.cost, unit));
      // The first ask has no history: the key just crossed LEASE_HOT_RATE, so that is its rate.
      const rate = slice.measured
        ? (slice.offered[i]! * 1000) / elapsed
        : this.options.hotRate * need[i]!;
      slice.rate[i] = slice.rate[i] === 0 ? rate : (slice.rate[i]! + rate) / 2;
      slice.offered[i] = 0;
      const demand = Math.ceil((slice.rate[i]! * this.options.horizonMs) / 1000);
      // Near the end of what Redis has left, a slice holds only the requests in hand: units taken
      // for demand still to come would be stranded here if that demand went to other replicas,
      // which Redis then refuses (a burst of 3x the limit admitted 998 of 1000).
      const scarce = slice.measured && slice.remaining(i) < this.replicas * demand;
      want.push(scarce ? queued : Math.max(queued, demand));
    }
    slice.askedAt = now;
    slice.measured = true;
    const ask = this.askOf(slice, want, need);
    slice.left.fill(0);
    const askedAt = now;
    const call = this.host
      .storeFor(slice.key)
      .lease(slice.q, slice.key, ask)
      .then(
        (grant) => this.granted(slice, grant, askedAt),
        (error: unknown) => this.failed(slice, error),
      );
    this.asks.add(call);
    void call.finally(() => this.asks.delete(call));
  }

  /** The lease call's arguments; gives back what is left of the slice (taken from it now). */
  private askOf(slice: Slice, want: number[], need: number[]): LeaseAsk {
    const ask: LeaseAsk = {
      holder: this.holder,
      prevSeq: slice.seq,
      replicas: this.replicas,
      ttlMs: this.options.ttlMs,
      horizonMs: this.options.horizonMs,
      approved: slice.approved,
      denied: slice.denied,
      want,
      need,
      unspent: [...slice.left],
    };
    slice.approved = 0;
    slice.denied = 0;
    if (slice.seq > 0) for (const u of slice.left) this.counters.returned += u;
    return ask;
  }

  private granted(slice: Slice, grant: LeaseGrant, askedAt: number): void {
    slice.asking = false;
    if (slice.revoked) {
      for (const p of slice.pending.splice(0)) void this.host.again(slice.q, p).then(p.resolve);
      return;
    }
    slice.granted(grant, askedAt, this.options.horizonMs);
    // After the new grant is in place: the old one went back with the ask, so a note about one of
    // its admissions is settled in Redis, where that grant charged it.
    this.noted(grant);
    if (grant.outcome.allowed) {
      this.counters.grants++;
      for (const g of grant.granted) this.counters.granted += g;
    }
    const now = this.host.now();
    while (slice.pending.length > 0) {
      const p = slice.pending[0]!;
      const d = this.fromSlice(slice, p.input, p.requestId, p.counted, now);
      if (d === undefined) break;
      slice.pending.shift();
      p.resolve(d);
    }
    if (slice.pending.length > 0 && !this.closed) this.ask(slice, now);
  }

  private failed(slice: Slice, error: unknown): void {
    slice.asking = false;
    slice.clear();
    const keys = this.slices.get(slice.q.name);
    if (keys?.get(slice.key) === slice) {
      keys.delete(slice.key);
      this.count--;
    }
    for (const p of slice.pending.splice(0)) {
      // A revoked slice's requests are decided afresh under the quota now in force.
      const answer = slice.revoked
        ? this.host.again(slice.q, p)
        : this.host.failed(slice.q, p, error);
      void Promise.resolve(answer).then(p.resolve);
    }
  }

  /** Also when nothing is left to give: the call takes the notes other replicas left for us. */
  private giveBack(slice: Slice): Promise<unknown> {
    const zero = slice.left.map(() => 0);
    const ask = this.askOf(slice, zero, zero);
    slice.clear();
    return this.host
      .storeFor(slice.key)
      .lease(slice.q, slice.key, ask)
      .then(
        (grant) => this.noted(grant),
        () => undefined, // lost: those units stay charged until their period ends
      );
  }

  /**
   * Releases and usage other replicas took for this replica's admissions: a release gives the
   * cost back, a usage (charged whole over there) gives the estimate back; each at most once.
   */
  private noted(grant: LeaseGrant): void {
    for (const note of grant.notes) {
      const slot = this.receiptOf(note.id);
      if (slot < 0) continue;
      const slice = this.receiptSlices[slot]!;
      const cost = this.receiptCosts[slot];
      this.receiptIds[slot] = -1;
      const back = slice.q.limits.map((l) => -costFor(cost, l.unit));
      void this.adjust(slice, slot, back).catch(() => undefined); // lost: counted more, never less
    }
  }

  /** Names a leased admission: `<holder>l<n>`; its receipt lives in a ring of RECEIPTS. */
  private receipt(slice: Slice, input: NormalisedAcquire): string {
    const n = this.next++;
    const slot = n % RECEIPTS;
    this.receiptIds[slot] = n;
    this.receiptSeqs[slot] = slice.seq;
    this.receiptSlices[slot] = slice;
    this.receiptCosts[slot] = input.cost;
    this.receiptAt[slot] = slice.chargedAt;
    this.receiptUntil[slot] = slice.until;
    return `${this.holder}l${n.toString(36)}`;
  }

  private receiptOf(requestId: string): number {
    if (!requestId.startsWith(`${this.holder}l`)) return -1;
    const n = parseInt(requestId.slice(this.holder.length + 1), 36);
    if (!Number.isSafeInteger(n) || n < 0) return -1;
    const slot = n % RECEIPTS;
    // A revoked slice's quota changed: its old layout must not be written to Redis again.
    if (this.receiptIds[slot] !== n || this.receiptSlices[slot]!.revoked) return -1;
    return slot;
  }

  /** A receipt's cost changed by `delta` per limit: within its live grant, or in Redis. */
  private async adjust(slice: Slice, slot: number, delta: number[]): Promise<void> {
    const now = this.host.now();
    const live = slice.seq === this.receiptSeqs[slot] && now < slice.deadline && !slice.asking;
    if (live && delta.every((d, i) => d <= slice.left[i]! || d <= 0)) {
      for (let i = 0; i < delta.length; i++) slice.left[i]! -= delta[i]!;
      return;
    }
    if (delta.every((d) => d === 0)) return;
    await this.host
      .storeFor(slice.key)
      .settle(slice.q, slice.key, this.receiptAt[slot]!, this.receiptUntil[slot] ?? [], delta);
  }
}
