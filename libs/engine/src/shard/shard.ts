import type { CompiledLimit } from '../algorithms';
import { ROW_APPROVED, ROW_DENIED, ROW_STATS_WINDOW, type CompiledQuota } from '../quota/compile';
import type { AcquireInput, Cost, Decision, DecisionCode, KeyLimitsView, KeyStats } from '../types';
import { Reply, refusal } from './decision';
import { Idempotency, memoKey } from './idempotency';
import { rowIdleAt } from './idle';
import { KeyLimits, keyQuota } from './key-limits';
import {
  chargeAll,
  check,
  Costs,
  describe,
  limitStats,
  reasonFor,
  refundAll,
  settleAll,
  statsWindow,
  syncRow,
  touchStats,
  type Verdict,
} from './limit-check';
import { convertRow } from './migrate';
import { Receipts } from './receipts';
import { adjustCapacities, newTable, relayout, sameLayout, type TableState } from './table';
import {
  KeyTimers,
  nextDue,
  refuseAll,
  retryBehindWaiters,
  timeOutWaiters,
  waiterRefusal,
} from './wait-queue';
import { KeyExtras, PendingAcquire, Waiter, type Lease, type WaitHost } from './waiters';

export type { TableState } from './table';

export interface ShardOptions {
  readonly idempotencyTtlMs: number;
  readonly receiptTtlMs: number;
  readonly receiptCapacity: number;
  /** Client requestIds a shard remembers at most: first answers and receipt links alike. */
  readonly idempotencyCapacity: number;
  /** How often idle keys are looked for and dropped. */
  readonly idleSweepMs: number;
}

/** One acquire or decide being answered: what judge, admit, deny and enqueue read. */
interface Attempt {
  readonly t: TableState;
  /** The quota the key is decided by: the table's, or with the key's own limits. */
  readonly q: CompiledQuota;
  readonly input: AcquireInput;
  /** The client's requestId; undefined: the shard names the request. */
  readonly requestId: string | undefined;
  /** The requestId's slot in the shard's memory of ids (-1: none, or not known here). */
  readonly idSlot: number;
  readonly hash: number;
  readonly now: number;
  /** An acquire commits; a decide is a dry run. */
  readonly commit: boolean;
  /** The key's row; -1 in a dry run for a key the shard does not hold. */
  readonly row: number;
  readonly extras: KeyExtras | undefined;
  /** The state judged, at `base`: the key's own row, or a copy of it in a dry run. */
  readonly s: Float64Array;
  readonly base: number;
}

/**
 * An actor: this shard alone owns the state of the (quota, key)s that hash to it. Node runs one
 * call at a time, so a shard needs no lock; hosts with worker threads give each shard one owner.
 *
 * Acquire and decide are one core, `reserve` (as x/time/rate's reserveN serves Allow, Reserve and
 * Wait): decide runs it on a copy of the key's row and commits nothing.
 */
export class Shard implements WaitHost {
  readonly tables: (TableState | undefined)[] = [];
  private readonly timers = new KeyTimers();
  private readonly receipts: Receipts;
  private readonly memos: Idempotency;
  /** Cost per limit of the request being decided, and of waiters a simulation replays. */
  private readonly costs = new Costs();
  private readonly replayCosts = new Costs();
  private scratch = new Float64Array(64);
  private counter = 0;
  private readonly admittedPrefix: string;
  private readonly otherPrefix: string;
  /** When the next pass over the rows drops idle keys; 0 while the shard holds no key. */
  private sweepAt = 0;
  /** The clock stepped back: the next pass also brings rows dated after it back to it. */
  private redateRows = false;

  /** `sweepPhase` (0..1) staggers the shards' passes so they never all run in one tick. */
  constructor(
    readonly id: number,
    idPrefix: string,
    private readonly options: ShardOptions,
    private readonly sweepPhase = 1,
  ) {
    this.receipts = new Receipts(options.receiptCapacity, options.receiptTtlMs);
    this.memos = new Idempotency(options.idempotencyTtlMs, options.idempotencyCapacity);
    this.admittedPrefix = `${idPrefix}${id.toString(36)}a`;
    this.otherPrefix = `${idPrefix}${id.toString(36)}n`;
  }

  // ---------------------------------------------------------------- tables and quota changes

  table(index: number, quota: CompiledQuota): TableState {
    return (this.tables[index] ??= newTable(index, quota));
  }

  /**
   * Applies a quota to existing keys: counts are kept, waiters are re-examined. Keys' own limits
   * (GoCC's client overrides) give way to a quota whose spec changed, as GoCC's config reload
   * puts every limiter back to the config's numbers; an unchanged spec keeps them.
   */
  changeQuota(index: number, quota: CompiledQuota, specChanged: boolean, now: number): void {
    const t = this.tables[index];
    if (t === undefined) return;
    const old = t.quota;
    this.rebaseKeyLimits(t, quota, specChanged, now);
    t.quota = quota;
    if (sameLayout(old, quota)) {
      adjustCapacities(old.limits, quota.limits, t.keys);
    } else {
      t.keys = relayout(t.keys, old, quota, now);
      // Rows were renumbered: entries pointing at old rows must not count as live any more.
      for (const x of t.extras.values()) x.scheduledAt = 0;
    }
    if (t.extras.size === 0) return;
    for (let row = 0; row < t.keys.keys.length; row++) {
      const key = t.keys.keys[row];
      if (key !== undefined && t.extras.has(key)) this.examine(t, row, now);
    }
  }

  /** The quota was deleted: its waiters are told, its state dropped. */
  dropQuota(index: number, now: number): void {
    const t = this.tables[index];
    if (t === undefined) return;
    for (const extras of t.extras.values()) {
      refuseAll(extras, 'UNKNOWN_QUOTA', 'quota: was deleted', now);
    }
    this.tables[index] = undefined;
  }

  // ---------------------------------------------------------------- acquire and decide

  acquire(
    t: TableState,
    input: AcquireInput,
    now: number,
    hash: number,
  ): Decision | PendingAcquire {
    const rid = input.requestId;
    if (rid === undefined) return this.reserve(t, input, undefined, hash, now, true, -1);
    const memos = this.memos;
    const memo = memoKey(t.index, input.key, rid);
    const known = memos.find(memo);
    if (known >= 0) {
      const seen = memos.recall(known, now, rid, input.key, t.quota.name);
      if (seen !== undefined) return seen;
    }
    const slot = memos.open(memo, known, now);
    const answer = this.reserve(t, input, rid, hash, now, true, slot);
    memos.remember(slot, answer);
    return answer;
  }

  /** A dry run: answers as acquire would, charges nothing, never waits, creates no state. */
  decide(t: TableState, input: AcquireInput, now: number, hash: number): Decision {
    return this.reserve(t, input, input.requestId, hash, now, false, -1) as Decision;
  }

  /**
   * The one core of acquire (`commit`) and decide: the request is judged against the limits, the
   * waiters ahead and the concurrency cap; then admitted, refused or queued. A dry run judges a
   * copy of the key's row and leaves no trace.
   */
  private reserve(
    t: TableState,
    input: AcquireInput,
    requestId: string | undefined,
    hash: number,
    now: number,
    commit: boolean,
    idSlot: number,
  ): Decision | PendingAcquire {
    const key = input.key;
    if (input.deadline !== undefined && input.deadline <= now) {
      return refusal(
        'WAIT_TIMEOUT',
        requestId ?? this.otherId(),
        key,
        t.quota.name,
        'deadline: has passed',
      );
    }
    let row = t.keys.find(key, hash);
    const own = row < 0 ? undefined : t.keys.ownAt(row);
    const q = own?.quota ?? t.quota;
    const exceeds = this.costs.fill(q, input.cost);
    if (exceeds >= 0) {
      const r = this.costExceeds(q, exceeds, requestId, key);
      return q.shadow ? shadowed(r) : r;
    }
    let s: Float64Array;
    let base: number;
    if (commit) {
      if (row < 0) row = this.createRow(t, key, hash, now);
      t.keys.mark(row);
      s = t.keys.rows;
      base = row * q.stride;
    } else {
      s = this.scratchRow(q.stride);
      if (row >= 0) s.set(t.keys.rows.subarray(row * q.stride, (row + 1) * q.stride));
      base = 0;
    }
    const extras = row < 0 || t.extras.size === 0 ? undefined : t.extras.get(key);
    if (commit) {
      extras?.expireLeases(now);
      if (own !== undefined) own.lastUsed = now;
    }
    const a: Attempt = { t, q, input, requestId, idSlot, hash, now, commit, row, extras, s, base };
    const verdict = this.judge(a);
    if (commit) touchStats(q, s, base, now);
    if (verdict === undefined) return commit ? this.admit(a, 0) : this.dryAdmit(a);
    if (q.shadow) return this.wouldRefuse(a, verdict);
    if (commit && input.wait === true && q.queue !== undefined) return this.enqueue(a, verdict);
    return this.deny(a, verdict, verdict.code);
  }

  /** Why `a` cannot be admitted now (undefined: it can). */
  private judge(a: Attempt): Verdict | undefined {
    const { q, s, base, now } = a;
    const limits = check(q, this.costs, s, base, now);
    const refusing = limits?.refusing ?? -1;
    const extras = a.extras;
    if (extras !== undefined && extras.waiting > 0) {
      // Strict FIFO: nobody overtakes a waiter, even when the request would fit.
      const copy = this.copyRow(q, s, base);
      const retryMs = retryBehindWaiters(q, copy, extras, a.input.cost, now, this.replayCosts);
      return { code: 'RATE_LIMITED', refusing, retryMs };
    }
    // A full cap answers CONCURRENCY_LIMITED even when a limit refuses too; the retry waits for both.
    const cap = q.concurrency?.max;
    if (cap !== undefined && extras !== undefined && extras.liveLeases(now) >= cap) {
      const retryMs = Math.max(limits?.retryMs ?? 0, extras.earliestLease(now) - now, 1);
      return { code: 'CONCURRENCY_LIMITED', refusing, retryMs };
    }
    return limits;
  }

  private costExceeds(
    q: CompiledQuota,
    limit: number,
    requestId: string | undefined,
    key: string,
  ): Reply {
    const l = q.limits[limit]!;
    const cost = this.costs.at(limit);
    const r = refusal(
      'COST_EXCEEDS_LIMIT',
      requestId ?? this.otherId(),
      key,
      q.name,
      `cost.${l.unit}: ${cost} exceeds the capacity ${l.capacity} of limit ${l.name}`,
    );
    r.limit = l.capacity;
    r.limitName = l.name;
    return r;
  }

  /** Charges the attempt's costs, counts it, keeps its receipt and takes its lease. */
  private admit(a: Attempt, waitedMs: number): Reply {
    const { t, q, input, now, row, s, base } = a;
    chargeAll(q, this.costs, s, base, now);
    s[base + ROW_APPROVED]! += 1;
    t.approved++;
    const seq = this.receipts.add(t.index, a.hash, input.cost, now);
    let id = a.requestId;
    if (id === undefined) id = this.admittedPrefix + seq;
    else if (a.idSlot >= 0) this.memos.issueAt(a.idSlot, seq);
    else this.memos.issue(memoKey(t.index, input.key, id), seq);
    const r = new Reply(true, 'OK', id, input.key, q.name);
    describe(r, q, s, base, now, -1);
    r.waitedMs = waitedMs;
    if (q.concurrency !== undefined) {
      const x = a.extras ?? this.extrasOf(t, input.key);
      x.leases ??= new Map<string, Lease>();
      const leaseId = `${this.otherPrefix}l${(this.counter++).toString(36)}`;
      const expiresAt = now + q.concurrency.leaseTtlMs;
      x.leases.set(leaseId, { id: leaseId, requestId: id, expiresAt });
      r.leaseId = leaseId;
      this.timers.schedule(x, t.index, row, expiresAt);
    }
    return r;
  }

  /** What admitting would answer: the dry run's copy is charged, nothing else. */
  private dryAdmit(a: Attempt): Reply {
    const q = a.q;
    chargeAll(q, this.costs, a.s, a.base, a.now);
    const r = new Reply(true, 'OK', a.requestId ?? this.otherId(), a.input.key, q.name);
    describe(r, q, a.s, a.base, a.now, -1);
    return r;
  }

  /** Refuses with `code` (the verdict's, or QUEUE_FULL); an acquire counts it denied. */
  private deny(a: Attempt, v: Verdict, code: DecisionCode): Reply {
    const q = a.q;
    if (a.commit) {
      a.s[a.base + ROW_DENIED]! += 1;
      a.t.denied++;
    }
    const r = new Reply(false, code, a.requestId ?? this.otherId(), a.input.key, q.name);
    describe(r, q, a.s, a.base, a.now, v.refusing);
    r.retryAfterMs = Math.max(1, v.retryMs);
    r.reason = reasonFor(code, q, v.refusing);
    return r;
  }

  /** A shadow quota admits what it would refuse, charges nothing, and says so. */
  private wouldRefuse(a: Attempt, v: Verdict): Reply {
    const r = this.deny(a, v, v.code);
    r.allowed = true;
    r.code = 'OK';
    r.shadow = true;
    r.reason = `shadow: would be ${v.code}`;
    return r;
  }

  private enqueue(a: Attempt, v: Verdict): Decision | PendingAcquire {
    const { t, input, now } = a;
    const queue = a.q.queue!;
    const budget = Math.min(input.maxWaitMs ?? queue.maxWaitMs, queue.maxWaitMs);
    if (budget <= 0) return this.deny(a, v, v.code);
    const extras = a.extras ?? this.extrasOf(t, input.key);
    if (extras.waiting >= queue.maxSize) {
      return this.deny(a, v, 'QUEUE_FULL');
    }
    const deadline = Math.min(now + budget, input.deadline ?? Infinity);
    const id = a.requestId ?? this.otherId();
    const waiter = new Waiter(t, input, id, now, deadline, a.hash, this);
    extras.queue.push(waiter);
    extras.waiting++;
    const wake = extras.waiting === 1 ? Math.min(deadline, now + Math.max(1, v.retryMs)) : deadline;
    this.timers.schedule(extras, t.index, a.row, wake);
    return waiter.pending;
  }

  /** WaitHost: the last caller of `waiter` left. */
  cancelWaiter(waiter: Waiter, now: number): boolean {
    const t = waiter.table;
    if (waiter.done || this.tables[t.index] !== t) return false;
    const extras = t.extras.get(waiter.input.key);
    if (extras !== undefined) extras.waiting--;
    waiter.settle(this.leftAnswer(waiter, now));
    const row = t.keys.find(waiter.input.key, waiter.hash);
    if (row >= 0) this.examine(t, row, now);
    return true;
  }

  /** WaitHost: a waiter with a client requestId is remembered by its answer from now on. */
  settled(waiter: Waiter, answer: Decision): void {
    const rid = waiter.input.requestId;
    if (rid === undefined) return;
    this.memos.settle(memoKey(waiter.table.index, waiter.input.key, rid), waiter.pending, answer);
  }

  /** WaitHost: a caller that leaves is answered this. */
  leftAnswer(waiter: Waiter, now: number): Decision {
    return waiterRefusal(waiter, 'WAIT_TIMEOUT', 'wait: cancelled by the caller', now);
  }

  private extrasOf(t: TableState, key: string): KeyExtras {
    let x = t.extras.get(key);
    if (x === undefined) {
      x = new KeyExtras();
      t.extras.set(key, x);
    }
    return x;
  }

  private copyRow(q: CompiledQuota, s: Float64Array, base: number): Float64Array {
    const copy = this.scratch === s ? new Float64Array(q.stride) : this.scratchRow(q.stride);
    copy.set(s.subarray(base, base + q.stride));
    return copy;
  }

  private scratchRow(stride: number): Float64Array {
    if (this.scratch.length < stride) this.scratch = new Float64Array(stride * 2);
    this.scratch.fill(0, 0, stride);
    return this.scratch;
  }

  private otherId(): string {
    return this.otherPrefix + (this.counter++).toString(36);
  }

  // ---------------------------------------------------------------- release, usage, stats

  release(
    t: TableState,
    key: string,
    hash: number,
    requestId: string | undefined,
    leaseId: string | undefined,
    now: number,
  ): boolean {
    const row = t.keys.find(key, hash);
    if (row < 0) return false;
    const own = t.keys.ownAt(row);
    const q = own?.quota ?? t.quota;
    if (own !== undefined) own.lastUsed = now;
    let released = false;
    if (q.concurrency !== undefined) {
      const leases = t.extras.get(key)?.leases;
      if (leases !== undefined) {
        if (leaseId !== undefined) {
          released = leases.delete(leaseId);
        } else if (requestId !== undefined) {
          for (const l of leases.values()) {
            if (l.requestId === requestId) {
              released = leases.delete(l.id);
              break;
            }
          }
        }
      }
    } else if (requestId !== undefined) {
      const i = this.findReceipt(t, key, hash, requestId);
      if (i >= 0) {
        const cost = this.receipts.costAt(i);
        refundAll(q, t.keys.rows, row * q.stride, cost, this.receipts.chargedAtOf(i), now);
        this.receipts.markReleased(i);
        released = true;
      }
    }
    if (released) this.examine(t, row, now);
    return released;
  }

  /** Settles a request's estimate to its actual cost, or records usage nobody acquired. */
  usage(
    t: TableState,
    key: string,
    hash: number,
    requestId: string | undefined,
    cost: Cost,
    now: number,
  ): KeyStats {
    let row = t.keys.find(key, hash);
    const q = this.quotaOf(t, row);
    const i = requestId === undefined || row < 0 ? -1 : this.findReceipt(t, key, hash, requestId);
    if (row < 0) row = this.createRow(t, key, hash, now);
    const charged = i >= 0 ? this.receipts.costAt(i) : NOTHING;
    const chargedAt = i >= 0 ? this.receipts.chargedAtOf(i) : now;
    settleAll(q, t.keys.rows, row * q.stride, charged, cost, chargedAt, now);
    if (i >= 0) this.receipts.setCost(i, cost);
    this.examine(t, row, now);
    return this.stats(t, key, hash, now);
  }

  private findReceipt(t: TableState, key: string, hash: number, requestId: string): number {
    const issued = this.memos.receiptOf(memoKey(t.index, key, requestId));
    if (issued !== undefined) return this.receipts.find(issued, t.index, hash);
    if (requestId.startsWith(this.admittedPrefix)) {
      const digits = requestId.slice(this.admittedPrefix.length);
      const seq = /^\d{1,15}$/.test(digits) ? Number(digits) : NaN;
      if (Number.isSafeInteger(seq)) return this.receipts.find(seq, t.index, hash);
    }
    return -1;
  }

  stats(t: TableState, key: string, hash: number, now: number): KeyStats {
    const row = t.keys.find(key, hash);
    const q = this.quotaOf(t, row);
    let s: Float64Array;
    let base = 0;
    if (row < 0) {
      s = this.scratchRow(q.stride);
    } else {
      s = t.keys.rows;
      base = row * q.stride;
    }
    const limits = limitStats(q, s, base, now);
    const extras = t.extras.get(key);
    const sameWindow = row >= 0 && s[base + ROW_STATS_WINDOW] === statsWindow(q, s, base, now);
    return {
      key,
      quota: q.name,
      limits,
      queued: extras?.waiting ?? 0,
      inFlight: extras?.liveLeases(now) ?? 0,
      approved: sameWindow ? s[base + ROW_APPROVED]! : 0,
      denied: sameWindow ? s[base + ROW_DENIED]! : 0,
    };
  }

  // ---------------------------------------------------------------- a key's own limits

  /**
   * GoCC's client override: sets the key's own limit and queue size in place (absent: as before),
   * its counts kept, so the next decision counts what the key already used against them.
   * Throws InvalidQuotaError, changing nothing, when they cannot apply to the key's quota.
   */
  setKeyLimits(
    t: TableState,
    key: string,
    hash: number,
    limit: number | undefined,
    queueSize: number | undefined,
    now: number,
  ): KeyLimitsView {
    let row = t.keys.find(key, hash);
    const held = row < 0 ? undefined : t.keys.ownAt(row);
    const nextLimit = limit ?? held?.limit;
    const nextSize = queueSize ?? held?.queueSize;
    if (held !== undefined && held.limit === nextLimit && held.queueSize === nextSize) {
      held.lastUsed = now;
      return { spec: held.quota.spec, own: true };
    }
    const quota = keyQuota(t.quota, nextLimit, nextSize, t.keyQuotas);
    if (row < 0) row = this.createRow(t, key, hash, now);
    t.keys.setOwn(row, new KeyLimits(quota, nextLimit, nextSize, now));
    // A raised limit or a larger queue may admit waiters now.
    this.examine(t, row, now);
    return { spec: quota.spec, own: true };
  }

  /** The limits the key is decided by. */
  limitsOf(t: TableState, key: string, hash: number): KeyLimitsView {
    const row = t.keys.find(key, hash);
    const own = row < 0 ? undefined : t.keys.ownAt(row);
    return own === undefined
      ? { spec: t.quota.spec, own: false }
      : { spec: own.quota.spec, own: true };
  }

  /** The quota the key of `row` (-1: none) is decided by. */
  private quotaOf(t: TableState, row: number): CompiledQuota {
    return (row < 0 ? undefined : t.keys.ownAt(row)?.quota) ?? t.quota;
  }

  /**
   * Before `t` takes `quota`: keys' own limits are derived again from it, or dropped when its spec
   * changed. Rows are first brought to `now` under the key's limits, which a token bucket's refill
   * depends on, so a conversion to another layout starts from what the key really holds.
   */
  private rebaseKeyLimits(
    t: TableState,
    quota: CompiledQuota,
    specChanged: boolean,
    now: number,
  ): void {
    t.keyQuotas.clear();
    const keys = t.keys;
    for (let row = 0; keys.withOwn > 0 && row < keys.keys.length; row++) {
      const own = keys.ownAt(row);
      if (own === undefined) continue;
      if (specChanged) {
        syncRow(own.quota, keys.rows, row * own.quota.stride, now);
        keys.setOwn(row, undefined);
        continue;
      }
      const derived = keyQuota(quota, own.limit, own.queueSize, t.keyQuotas);
      keys.setOwn(row, new KeyLimits(derived, own.limit, own.queueSize, own.lastUsed));
    }
  }

  /** Forgets a key's counts (admin resetKey). Waiters and leases stay and are re-examined. */
  reset(t: TableState, key: string, hash: number, now: number): boolean {
    const row = t.keys.find(key, hash);
    if (row < 0) return false;
    const q = t.quota;
    const base = row * q.stride;
    t.keys.rows.fill(0, base, base + q.stride);
    this.examine(t, row, now);
    return true;
  }

  /** Loads one key's state from a snapshot row laid out as `from`. */
  load(
    t: TableState,
    key: string,
    hash: number,
    from: readonly CompiledLimit[],
    src: Float64Array,
    srcBase: number,
    leases: readonly { id: string; requestId: string; expiresAt: number }[],
    now: number,
  ): void {
    const q = t.quota;
    const existing = t.keys.find(key, hash);
    const row = existing >= 0 ? existing : this.createRow(t, key, hash, now);
    convertRow(from, src, srcBase, q.limits, t.keys.rows, row * q.stride, now);
    if (q.concurrency !== undefined) {
      // A lease lasts leaseTtlMs from its admission, which came no later than now.
      const latest = now + q.concurrency.leaseTtlMs;
      for (const l of leases) {
        if (!(l.expiresAt > now)) continue;
        const x = this.extrasOf(t, key);
        x.leases ??= new Map<string, Lease>();
        const expiresAt = Math.min(l.expiresAt, latest);
        x.leases.set(l.id, { id: l.id, requestId: l.requestId, expiresAt });
      }
    }
    this.examine(t, row, now);
  }

  // ---------------------------------------------------------------- time

  /** Runs every check due at or before `now` and drops what has expired. */
  advance(now: number): void {
    this.timers.runDue(now, this.tables, (t, row) => this.examine(t, row, now));
    if (this.sweepAt !== 0 && now >= this.sweepAt) this.dropIdleRows(now);
    this.sweep(now);
  }

  /**
   * The host's clock stepped back to `now`. What was dated from the later clock happened no later
   * than now, so it is dated now: every timer entry is due, leases and waits last their span from
   * now at most, receipts and remembered answers expire their TTL from now, the next idle pass
   * comes within its interval and brings rows dated after now back to it (algorithms do the same
   * for a row a request reaches first). Nothing waits for the clock to come back.
   */
  clockSteppedBack(now: number): void {
    this.timers.stepBack(now);
    for (const t of this.tables) {
      if (t === undefined) continue;
      const ttl = t.quota.concurrency?.leaseTtlMs ?? Infinity;
      for (const x of t.extras.values()) x.stepBack(now, ttl);
    }
    this.receipts.stepBack(now);
    this.memos.stepBack(now);
    if (this.sweepAt !== 0) {
      this.sweepAt = Math.min(this.sweepAt, now + this.options.idleSweepMs);
      this.redateRows = true;
    }
  }

  nextWakeAt(): number {
    const at = this.timers.nextAt();
    return this.sweepAt !== 0 && this.sweepAt < at ? this.sweepAt : at;
  }

  /**
   * Keys without waiters or leases own no timer entry (16 bytes and a heap push saved per key):
   * a pass over the rows every `idleSweepMs` drops those whose state holds no information.
   */
  private dropIdleRows(now: number): void {
    const redate = this.redateRows;
    this.redateRows = false;
    let left = 0;
    for (const t of this.tables) {
      if (t === undefined) continue;
      const q = t.quota;
      // Re-read on every step: the last delete resets the table.
      for (let row = 0; row < t.keys.keys.length; row++) {
        const key = t.keys.keys[row];
        if (key === undefined) continue;
        if (redate) redateRow(t, row, now);
        if (t.extras.has(key) || this.keepsOwn(t, row, now)) continue;
        if (rowIdleAt(q, t.keys.rows, row * q.stride) <= now) t.keys.delete(row);
      }
      left += t.keys.size;
    }
    // The next instant of this shard's own phase: re-armed from `now`, the shards that a pause
    // made due together would stay together, one call passing over every key each interval.
    const interval = this.options.idleSweepMs;
    const late = Math.max(0, now - this.sweepAt);
    this.sweepAt = left > 0 ? this.sweepAt + (Math.floor(late / interval) + 1) * interval : 0;
  }

  /**
   * Whether the key of `row` keeps its own limits: GoCC keeps a limiter, and a client's numbers
   * with it, until 3 windows pass without a request; then they lapse here, and the key is like
   * any other.
   */
  private keepsOwn(t: TableState, row: number, now: number): boolean {
    const own = t.keys.ownAt(row);
    if (own === undefined) return false;
    if (own.expiresAt() > now) return true;
    t.keys.setOwn(row, undefined);
    return false;
  }

  private createRow(t: TableState, key: string, hash: number, now: number): number {
    if (this.sweepAt === 0) this.sweepAt = now + this.options.idleSweepMs * this.sweepPhase;
    return t.keys.create(key, hash);
  }

  private sweep(now: number): void {
    this.receipts.sweep(now);
    this.memos.sweep(now, this.receipts.oldestSeq);
    for (const t of this.tables) {
      if (t === undefined) continue;
      const moved = t.keys.compact();
      if (moved !== undefined && moved.size > 0) this.timers.remap(t.index, moved);
    }
  }

  /**
   * Examines one key now: expires leases, times waiters out, admits waiters in FIFO order, drops
   * the key when its state holds no information, or schedules its next examination.
   */
  private examine(t: TableState, row: number, now: number): void {
    const keys = t.keys;
    // Every caller wrote the row or may now (refund, reset, load, admitted waiters, leases).
    keys.mark(row);
    const key = keys.keys[row]!;
    const own = keys.ownAt(row);
    const q = own?.quota ?? t.quota;
    const s = keys.rows;
    const extras = t.extras.get(key);
    const base = row * q.stride;
    let next = Infinity;
    if (extras !== undefined) {
      extras.expireLeases(now);
      timeOutWaiters(t, extras, s, base, now);
      for (let w = extras.firstWaiter(); w !== undefined; w = extras.firstWaiter()) {
        if (q.concurrency !== undefined && (extras.leases?.size ?? 0) >= q.concurrency.max) break;
        const exceeds = this.costs.fill(q, w.input.cost);
        if (exceeds >= 0) {
          // The limit was lowered under this waiter: it can never be admitted.
          extras.shift();
          w.settle(this.costExceeds(q, exceeds, w.requestId, key));
          continue;
        }
        const refused = check(q, this.costs, s, base, now);
        if (refused !== undefined) {
          next = Math.min(next, now + Math.max(1, refused.retryMs));
          break;
        }
        extras.shift();
        touchStats(q, s, base, now);
        if (own !== undefined) own.lastUsed = now;
        const a: Attempt = {
          t,
          q,
          input: w.input,
          requestId: w.requestId,
          idSlot: -1,
          hash: w.hash,
          now,
          commit: true,
          row,
          extras,
          s,
          base,
        };
        w.settle(this.admit(a, Math.max(0, now - w.enqueuedAt)));
      }
      next = Math.min(next, nextDue(extras, now));
      if (extras.isEmpty()) t.extras.delete(key);
    }
    const live = t.extras.get(key);
    if (live !== undefined) {
      if (next !== Infinity) this.timers.schedule(live, t.index, row, Math.max(next, now + 1));
    } else if (!this.keepsOwn(t, row, now) && rowIdleAt(q, s, base) <= now) {
      keys.delete(row);
    }
  }

  // ---------------------------------------------------------------- shutdown and introspection

  /** Answers every waiter (shutdown). */
  drain(code: DecisionCode, reason: string, now: number): void {
    for (const t of this.tables) {
      if (t === undefined) continue;
      for (const extras of t.extras.values()) refuseAll(extras, code, reason, now);
    }
  }

  /** Sizes of everything this shard holds, to prove memory returns to its baseline. */
  footprint(): {
    keys: number;
    timers: number;
    receipts: number;
    remembered: number;
    waiters: number;
  } {
    let keys = 0;
    let waiters = 0;
    for (const t of this.tables) {
      if (t === undefined) continue;
      keys += t.keys.size;
      for (const x of t.extras.values()) waiters += x.waiting;
    }
    return {
      keys,
      timers: this.timers.size,
      receipts: this.receipts.size,
      remembered: this.memos.size,
      waiters,
    };
  }
}

/**
 * After the clock stepped back to `now`: a row dated after it is brought back to it (as a request
 * would), so its idle instant, its stored copy and its key's own limits count from now.
 */
function redateRow(t: TableState, row: number, now: number): void {
  const keys = t.keys;
  const own = keys.ownAt(row);
  if (own !== undefined && own.lastUsed > now) own.lastUsed = now;
  const q = own?.quota ?? t.quota;
  const s = keys.rows;
  const base = row * q.stride;
  let ahead = s[base + ROW_STATS_WINDOW]! > now;
  for (const l of q.limits) ahead ||= l.impl.syncedAt(s, base + l.offset, l) > now;
  if (!ahead) return;
  syncRow(q, s, base, now);
  touchStats(q, s, base, now);
  keys.mark(row);
}

/** What usage without a receipt settles from. */
const NOTHING: Cost = { requests: 0 };

/** A shadow quota admits what a limit refused, and says so. */
function shadowed(r: Reply): Reply {
  r.reason = `shadow: would be ${r.code} (${r.reason ?? ''})`;
  r.allowed = true;
  r.code = 'OK';
  r.shadow = true;
  return r;
}
