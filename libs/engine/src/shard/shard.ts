import type { CompiledLimit } from '../algorithms';
import { costFor } from '../quota/cost';
import { ROW_APPROVED, ROW_DENIED, ROW_STATS_WINDOW, type CompiledQuota } from '../quota/compile';
import type { AcquireInput, Cost, Decision, DecisionCode, KeyStats, LimitStats } from '../types';
import { Reply, refusal } from './decision';
import { rowIdleAt } from './idle';
import { KeyTable } from './key-table';
import { convertRow } from './migrate';
import { Receipts } from './receipts';
import { TimerHeap } from './timer-heap';
import { KeyExtras, PendingAcquire, type Lease, type Waiter } from './waiters';

export interface ShardOptions {
  readonly idempotencyTtlMs: number;
  readonly receiptTtlMs: number;
  readonly receiptCapacity: number;
  /** How often idle keys are looked for and dropped. */
  readonly idleSweepMs: number;
}

/** The keys of one quota in this shard, with the counters the metrics read. */
export interface TableState {
  readonly index: number;
  quota: CompiledQuota;
  keys: KeyTable;
  readonly extras: Map<string, KeyExtras>;
  approved: number;
  denied: number;
}

interface Remembered {
  readonly at: number;
  readonly answer: Decision | PendingAcquire;
}

interface Issued {
  readonly at: number;
  readonly receipt: number;
}

const memoKey = (table: number, key: string, requestId: string): string =>
  `${table}\u0000${key}\u0000${requestId}`;

/**
 * An actor: this shard alone owns the state of the (quota, key)s that hash to it. Node runs one
 * call at a time, so a shard needs no lock; hosts with worker threads give each shard one owner.
 */
export class Shard {
  readonly tables: (TableState | undefined)[] = [];
  private readonly timers = new TimerHeap();
  private readonly receipts: Receipts;
  /** Answers by client requestId, for idempotency. */
  private readonly answers = new Map<string, Remembered>();
  /** Receipts of requests whose id does not encode them (client ids, waiters). */
  private readonly issued = new Map<string, Issued>();
  private scratch = new Float64Array(64);
  /** Cost per limit of the request being decided. */
  private costs = new Float64Array(8);
  private dryRow = new Float64Array(64);
  private retry = 0;
  private counter = 0;
  private readonly admittedPrefix: string;
  private readonly otherPrefix: string;
  /** When the next pass over the rows drops idle keys; 0 while the shard holds no key. */
  private sweepAt = 0;

  /** `sweepPhase` (0..1) staggers the shards' passes so they never all run in one tick. */
  constructor(
    readonly id: number,
    idPrefix: string,
    private readonly options: ShardOptions,
    private readonly sweepPhase = 1,
  ) {
    this.receipts = new Receipts(options.receiptCapacity, options.receiptTtlMs);
    this.admittedPrefix = `${idPrefix}${id.toString(36)}a`;
    this.otherPrefix = `${idPrefix}${id.toString(36)}n`;
  }

  // ---------------------------------------------------------------- tables and quota changes

  table(index: number, quota: CompiledQuota): TableState {
    let t = this.tables[index];
    if (t === undefined) {
      t = {
        index,
        quota,
        keys: new KeyTable(quota.stride),
        extras: new Map(),
        approved: 0,
        denied: 0,
      };
      this.tables[index] = t;
    }
    return t;
  }

  /** Applies a changed quota to existing keys: counts are kept, waiters are re-examined. */
  changeQuota(index: number, quota: CompiledQuota, now: number): void {
    const t = this.tables[index];
    if (t === undefined) return;
    const old = t.quota;
    t.quota = quota;
    const sameLayout =
      old.limits.length === quota.limits.length &&
      old.limits.every((l, i) => {
        const n = quota.limits[i]!;
        return l.name === n.name && l.layoutKey === n.layoutKey && l.offset === n.offset;
      });
    if (!sameLayout) {
      const next = t.keys.successor(quota.stride);
      for (let row = 0; row < t.keys.keys.length; row++) {
        const key = t.keys.keys[row];
        if (key === undefined) continue;
        const to = next.create(key, t.keys.hashOf(row));
        convertRow(
          old.limits,
          t.keys.rows,
          row * old.stride,
          quota.limits,
          next.rows,
          to * quota.stride,
          now,
        );
      }
      t.keys = next;
      // Rows were renumbered: entries pointing at old rows must not count as live any more.
      for (const x of t.extras.values()) x.scheduledAt = 0;
    } else {
      this.adjustCapacities(old.limits, quota.limits, t.keys);
    }
    if (t.extras.size === 0) return;
    for (let row = 0; row < t.keys.keys.length; row++) {
      const key = t.keys.keys[row];
      if (key !== undefined && t.extras.has(key)) this.examine(t, row, now);
    }
  }

  /** Token buckets keep their tokens when only the burst changed. */
  private adjustCapacities(
    from: readonly CompiledLimit[],
    to: readonly CompiledLimit[],
    keys: KeyTable,
  ): void {
    for (let i = 0; i < to.length; i++) {
      const a = from[i]!;
      const b = to[i]!;
      if (b.algorithm !== 'token_bucket' || a.capacity === b.capacity) continue;
      for (let row = 0; row < keys.keys.length; row++) {
        if (keys.keys[row] === undefined) continue;
        const at = row * keys.stride + b.offset;
        const tokens = a.capacity * a.windowMs - keys.rows[at]!;
        keys.rows[at] = b.capacity * b.windowMs - Math.min(tokens, b.capacity * b.windowMs);
        keys.mark(row);
      }
    }
  }

  /** The quota was deleted: its waiters are told, its state dropped. */
  dropQuota(index: number, now: number): void {
    const t = this.tables[index];
    if (t === undefined) return;
    for (const extras of t.extras.values()) {
      this.refuseAll(extras, 'UNKNOWN_QUOTA', t.quota.name, 'quota: was deleted', now);
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
    if (rid === undefined) return this.acquireOnce(t, input, undefined, now, hash);
    const memo = memoKey(t.index, input.key, rid);
    const seen = this.answers.get(memo);
    if (seen !== undefined && seen.at + this.options.idempotencyTtlMs > now) return seen.answer;
    const answer = this.acquireOnce(t, input, rid, now, hash);
    this.answers.delete(memo);
    this.answers.set(memo, { at: now, answer });
    return answer;
  }

  private acquireOnce(
    t: TableState,
    input: AcquireInput,
    requestId: string | undefined,
    now: number,
    hash: number,
  ): Decision | PendingAcquire {
    const q = t.quota;
    const key = input.key;
    if (input.deadline !== undefined && input.deadline <= now) {
      return refusal(
        'WAIT_TIMEOUT',
        requestId ?? this.otherId(),
        key,
        q.name,
        'deadline: has passed',
      );
    }
    const tooBig = this.costExceeds(q, input.cost, requestId, key);
    if (tooBig !== undefined) return q.shadow ? this.shadowed(tooBig) : tooBig;

    let row = t.keys.find(key, hash);
    if (row < 0) row = this.createRow(t, key, hash, now);
    t.keys.mark(row);
    const s = t.keys.rows;
    const base = row * q.stride;
    const extras = t.extras.size === 0 ? undefined : t.extras.get(key);

    const refusing = this.check(q, s, base, now);
    this.touchStats(q, s, base, now);
    let code: DecisionCode | undefined = refusing >= 0 ? 'RATE_LIMITED' : undefined;
    let retry = this.retry;
    if (extras !== undefined && extras.waiting > 0) {
      // Strict FIFO: nobody overtakes a waiter, even when the request would fit.
      code = 'RATE_LIMITED';
      retry = this.simulateRetry(t, row, extras, input.cost, now);
    } else if (q.concurrency !== undefined && extras?.leases !== undefined) {
      this.expireLeases(extras, now);
      if (extras.leases.size >= q.concurrency.max) {
        code = 'CONCURRENCY_LIMITED';
        retry = Math.max(retry, this.earliestLease(extras) - now, 1);
      }
    }

    let answer: Decision | PendingAcquire;
    if (code === undefined) {
      answer = this.admit(t, row, extras, input, requestId, now, 0, hash);
    } else if (q.shadow) {
      s[base + ROW_DENIED]! += 1;
      t.denied++;
      const r = new Reply(true, 'OK', requestId ?? this.otherId(), key, q.name);
      this.describe(r, q, s, base, now, refusing);
      r.shadow = true;
      r.retryAfterMs = retry;
      r.reason = `shadow: would be ${code}`;
      answer = r;
    } else if (input.wait === true && q.queue !== undefined) {
      answer = this.enqueue(t, row, extras, input, requestId, now, code, refusing, retry, hash);
    } else {
      answer = this.deny(
        t,
        row,
        input,
        requestId,
        now,
        code,
        refusing,
        retry,
        this.reasonFor(code, q, refusing),
      );
    }
    return answer;
  }

  /** A dry run: answers as acquire would, charges nothing, never waits, creates no state. */
  decide(t: TableState, input: AcquireInput, now: number, hash: number): Decision {
    const q = t.quota;
    const key = input.key;
    const requestId = input.requestId ?? this.otherId();
    if (input.deadline !== undefined && input.deadline <= now) {
      return refusal('WAIT_TIMEOUT', requestId, key, q.name, 'deadline: has passed');
    }
    const tooBig = this.costExceeds(q, input.cost, requestId, key);
    if (tooBig !== undefined) return q.shadow ? this.shadowed(tooBig) : tooBig;
    const found = t.keys.find(key, hash);
    const row = found < 0 ? undefined : found;
    const extras = row === undefined ? undefined : t.extras.get(key);
    let code: DecisionCode | undefined;
    let retry = 0;
    const waitersAhead = extras !== undefined && extras.waiting > 0;
    if (waitersAhead) {
      code = 'RATE_LIMITED';
      retry = this.simulateRetry(t, row!, extras, input.cost, now);
    }
    // Work on a copy of the row: the dry run must leave no trace.
    if (this.dryRow.length < q.stride) this.dryRow = new Float64Array(q.stride * 2);
    const s = this.dryRow;
    if (row === undefined) s.fill(0, 0, q.stride);
    else s.set(t.keys.rows.subarray(row * q.stride, (row + 1) * q.stride));
    const refusing = this.check(q, s, 0, now);
    if (code === undefined && refusing >= 0) {
      code = 'RATE_LIMITED';
      retry = this.retry;
    }
    // As acquire: a full cap answers CONCURRENCY_LIMITED even when a limit refuses too, and the
    // retry waits for both; leases acquire would expire first do not count.
    if (!waitersAhead && q.concurrency !== undefined && extras?.leases !== undefined) {
      let live = 0;
      let earliest = Infinity;
      for (const l of extras.leases.values()) {
        if (l.expiresAt <= now) continue;
        live++;
        if (l.expiresAt < earliest) earliest = l.expiresAt;
      }
      if (live >= q.concurrency.max) {
        code = 'CONCURRENCY_LIMITED';
        retry = Math.max(retry, earliest - now, 1);
      }
    }
    if (code === undefined) this.chargeAll(q, s, 0, now);
    const r = new Reply(code === undefined || q.shadow, 'OK', requestId, key, q.name);
    this.describe(r, q, s, 0, now, refusing);
    if (code !== undefined) {
      r.retryAfterMs = Math.max(1, retry);
      if (q.shadow) {
        r.shadow = true;
        r.reason = `shadow: would be ${code}`;
      } else {
        r.code = code;
        r.reason = this.reasonFor(code, q, refusing);
      }
    }
    return r;
  }

  /** A shadow quota admits what a limit refused, and says so. */
  private shadowed(r: Reply): Reply {
    r.reason = `shadow: would be ${r.code} (${r.reason ?? ''})`;
    r.allowed = true;
    r.code = 'OK';
    r.shadow = true;
    return r;
  }

  /** Fills `costs` (per limit, this request); returns the index of a limit the cost exceeds, or -1. */
  private fillCosts(q: CompiledQuota, cost: Cost | undefined): number {
    const limits = q.limits;
    if (this.costs.length < limits.length) this.costs = new Float64Array(limits.length * 2);
    const costs = this.costs;
    let exceeds = -1;
    for (let i = 0; i < limits.length; i++) {
      const l = limits[i]!;
      const c = costFor(cost, l.unit);
      costs[i] = c;
      if (c > l.capacity && exceeds < 0) exceeds = i;
    }
    return exceeds;
  }

  private costExceeds(
    q: CompiledQuota,
    cost: Cost | undefined,
    requestId: string | undefined,
    key: string,
  ): Reply | undefined {
    const i = this.fillCosts(q, cost);
    if (i < 0) return undefined;
    const l = q.limits[i]!;
    const r = refusal(
      'COST_EXCEEDS_LIMIT',
      requestId ?? this.otherId(),
      key,
      q.name,
      `cost.${l.unit}: ${this.costs[i]} exceeds the capacity ${l.capacity} of limit ${l.name}`,
    );
    r.limit = l.capacity;
    r.limitName = l.name;
    return r;
  }

  /** Syncs every limit and returns the index of the limit that refuses longest (-1: admitted). */
  private check(q: CompiledQuota, s: Float64Array, base: number, now: number): number {
    const limits = q.limits;
    const costs = this.costs;
    let refusing = -1;
    let retry = 0;
    for (let i = 0; i < limits.length; i++) {
      const l = limits[i]!;
      const o = base + l.offset;
      l.impl.sync(s, o, l, now);
      const c = costs[i]!;
      if (c > 0 && l.impl.available(s, o, l) < c) {
        const r = l.impl.retryAfter(s, o, l, now, c);
        if (refusing < 0 || r > retry) {
          retry = r;
          refusing = i;
        }
      }
    }
    this.retry = retry;
    return refusing;
  }

  /** Charges the costs of the last `fillCosts`, which the preceding `check` admitted. */
  private chargeAll(q: CompiledQuota, s: Float64Array, base: number, now: number): void {
    const limits = q.limits;
    const costs = this.costs;
    for (let i = 0; i < limits.length; i++) {
      const l = limits[i]!;
      const c = costs[i]!;
      if (c > 0) l.impl.charge(s, base + l.offset, l, now, c);
    }
  }

  /** Fills limit, remaining, resetMs and limitName from the binding limit. */
  private describe(
    r: Reply,
    q: CompiledQuota,
    s: Float64Array,
    base: number,
    now: number,
    refusing: number,
  ): void {
    const limits = q.limits;
    if (limits.length === 0) return;
    let idx = refusing;
    if (idx < 0) {
      idx = 0;
      if (limits.length > 1) {
        let least = Infinity;
        for (let i = 0; i < limits.length; i++) {
          const l = limits[i]!;
          const share = l.impl.available(s, base + l.offset, l) / l.capacity;
          if (share < least) {
            least = share;
            idx = i;
          }
        }
      }
    }
    const l = limits[idx]!;
    const o = base + l.offset;
    r.limit = l.capacity;
    r.remaining = Math.max(0, l.impl.available(s, o, l));
    r.resetMs = l.impl.resetMs(s, o, l, now);
    r.limitName = l.name;
  }

  private reasonFor(code: DecisionCode, q: CompiledQuota, refusing: number): string {
    switch (code) {
      case 'RATE_LIMITED':
        return refusing >= 0
          ? `limit ${q.limits[refusing]!.name} reached`
          : 'requests are waiting ahead';
      case 'CONCURRENCY_LIMITED':
        return `concurrency max ${q.concurrency?.max ?? 0} reached`;
      case 'QUEUE_FULL':
        return `queue of ${q.queue?.maxSize ?? 0} is full`;
      case 'WAIT_TIMEOUT':
        return 'waited until the deadline';
      case 'OK':
      case 'COST_EXCEEDS_LIMIT':
      case 'UNKNOWN_QUOTA':
      case 'INVALID_REQUEST':
      case 'UNAVAILABLE':
        return code;
    }
  }

  private admit(
    t: TableState,
    row: number,
    extras: KeyExtras | undefined,
    input: AcquireInput,
    requestId: string | undefined,
    now: number,
    waitedMs: number,
    hash: number,
  ): Reply {
    const q = t.quota;
    const s = t.keys.rows;
    const base = row * q.stride;
    const key = input.key;
    this.chargeAll(q, s, base, now);
    s[base + ROW_APPROVED]! += 1;
    t.approved++;
    const seq = this.receipts.add(t.index, hash, input.cost, now);
    let id = requestId;
    if (id === undefined) {
      id = this.admittedPrefix + seq;
    } else {
      this.issued.set(memoKey(t.index, key, id), { at: now, receipt: seq });
    }
    const r = new Reply(true, 'OK', id, key, q.name);
    this.describe(r, q, s, base, now, -1);
    r.waitedMs = waitedMs;
    if (q.concurrency !== undefined) {
      const x = extras ?? this.extrasOf(t, key);
      x.leases ??= new Map<string, Lease>();
      const leaseId = `${this.otherPrefix}l${(this.counter++).toString(36)}`;
      const expiresAt = now + q.concurrency.leaseTtlMs;
      x.leases.set(leaseId, { id: leaseId, requestId: id, expiresAt });
      r.leaseId = leaseId;
      this.scheduleAt(x, t.index, row, expiresAt);
    }
    return r;
  }

  private deny(
    t: TableState,
    row: number,
    input: AcquireInput,
    requestId: string | undefined,
    now: number,
    code: DecisionCode,
    refusing: number,
    retry: number,
    reason: string,
  ): Reply {
    const q = t.quota;
    const s = t.keys.rows;
    const base = row * q.stride;
    s[base + ROW_DENIED]! += 1;
    t.denied++;
    const r = new Reply(false, code, requestId ?? this.otherId(), input.key, q.name);
    this.describe(r, q, s, base, now, refusing);
    r.retryAfterMs = Math.max(1, retry);
    r.reason = reason;
    return r;
  }

  private enqueue(
    t: TableState,
    row: number,
    known: KeyExtras | undefined,
    input: AcquireInput,
    requestId: string | undefined,
    now: number,
    code: DecisionCode,
    refusing: number,
    retry: number,
    hash: number,
  ): Decision | PendingAcquire {
    const queue = t.quota.queue!;
    const budget = Math.min(input.maxWaitMs ?? queue.maxWaitMs, queue.maxWaitMs);
    const deadline = Math.min(now + budget, input.deadline ?? Infinity);
    if (budget <= 0) {
      return this.deny(
        t,
        row,
        input,
        requestId,
        now,
        code,
        refusing,
        retry,
        this.reasonFor(code, t.quota, refusing),
      );
    }
    const extras = known ?? this.extrasOf(t, input.key);
    if (extras.waiting >= queue.maxSize) {
      return this.deny(
        t,
        row,
        input,
        requestId,
        now,
        'QUEUE_FULL',
        refusing,
        retry,
        this.reasonFor('QUEUE_FULL', t.quota, refusing),
      );
    }
    const id = requestId ?? this.otherId();
    const waiter: Waiter = {
      input,
      requestId: id,
      enqueuedAt: now,
      deadline,
      hash,
      done: false,
      pending: new PendingAcquire(id, (_p, at) => this.cancel(t, waiter, at)),
    };
    extras.queue.push(waiter);
    extras.waiting++;
    const wake = extras.waiting === 1 ? Math.min(deadline, now + Math.max(1, retry)) : deadline;
    this.scheduleAt(extras, t.index, row, wake);
    return waiter.pending;
  }

  private cancel(t: TableState, waiter: Waiter, now: number): boolean {
    if (waiter.done || this.tables[t.index] !== t) return false;
    const extras = t.extras.get(waiter.input.key);
    if (extras !== undefined) extras.waiting--;
    this.refuseWaiter(waiter, 'WAIT_TIMEOUT', t.quota.name, 'wait: cancelled by the caller', now);
    const row = t.keys.find(waiter.input.key, waiter.hash);
    if (row >= 0) this.examine(t, row, now);
    return true;
  }

  private extrasOf(t: TableState, key: string): KeyExtras {
    let x = t.extras.get(key);
    if (x === undefined) {
      x = new KeyExtras();
      t.extras.set(key, x);
    }
    return x;
  }

  /** When would `cost` be admitted behind the current waiters, if nothing else happened? */
  private simulateRetry(
    t: TableState,
    row: number,
    extras: KeyExtras,
    cost: Cost | undefined,
    now: number,
  ): number {
    const q = t.quota;
    const s = this.scratchRow(q.stride);
    s.set(t.keys.rows.subarray(row * q.stride, (row + 1) * q.stride));
    let at = now;
    for (let i = extras.head; i < extras.queue.length; i++) {
      const w = extras.queue[i]!;
      if (w.done) continue;
      this.fillCosts(q, w.input.cost);
      this.check(q, s, 0, at);
      const admitted = at + this.retry;
      if (admitted >= w.deadline) continue; // it will time out, charging nothing
      at = admitted;
      this.check(q, s, 0, at);
      this.chargeAll(q, s, 0, at);
    }
    this.fillCosts(q, cost);
    this.check(q, s, 0, at);
    return Math.max(1, at + this.retry - now);
  }

  private scratchRow(stride: number): Float64Array {
    if (this.scratch.length < stride) this.scratch = new Float64Array(stride * 2);
    this.scratch.fill(0, 0, stride);
    return this.scratch;
  }

  private touchStats(q: CompiledQuota, s: Float64Array, base: number, now: number): void {
    const first = q.limits[0];
    const start =
      first === undefined ? 0 : first.impl.windowStart(s, base + first.offset, first, now);
    if (s[base + ROW_STATS_WINDOW] !== start) {
      s[base + ROW_STATS_WINDOW] = start;
      s[base + ROW_APPROVED] = 0;
      s[base + ROW_DENIED] = 0;
    }
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
    const q = t.quota;
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
        const s = t.keys.rows;
        const base = row * q.stride;
        const cost = this.receipts.costAt(i);
        const chargedAt = this.receipts.chargedAtOf(i);
        for (const l of q.limits) {
          const c = costFor(cost, l.unit);
          if (c > 0) {
            l.impl.sync(s, base + l.offset, l, now);
            l.impl.refund(s, base + l.offset, l, chargedAt, c);
          }
        }
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
    const q = t.quota;
    let row = t.keys.find(key, hash);
    const i = requestId === undefined || row < 0 ? -1 : this.findReceipt(t, key, hash, requestId);
    if (row < 0) row = this.createRow(t, key, hash, now);
    const s = t.keys.rows;
    const base = row * q.stride;
    const before = i >= 0 ? this.receipts.costAt(i) : undefined;
    const chargedAt = i >= 0 ? this.receipts.chargedAtOf(i) : now;
    for (const l of q.limits) {
      const o = base + l.offset;
      l.impl.sync(s, o, l, now);
      const delta = costFor(cost, l.unit) - (i >= 0 ? costFor(before, l.unit) : 0);
      if (delta > 0) l.impl.charge(s, o, l, now, delta);
      else if (delta < 0) l.impl.refund(s, o, l, chargedAt, -delta);
    }
    if (i >= 0) this.receipts.setCost(i, cost);
    this.examine(t, row, now);
    return this.stats(t, key, hash, now);
  }

  private findReceipt(t: TableState, key: string, hash: number, requestId: string): number {
    const issued = this.issued.get(memoKey(t.index, key, requestId));
    if (issued !== undefined) return this.receipts.find(issued.receipt, t.index, hash);
    if (requestId.startsWith(this.admittedPrefix)) {
      const digits = requestId.slice(this.admittedPrefix.length);
      const seq = /^\d{1,15}$/.test(digits) ? Number(digits) : NaN;
      if (Number.isSafeInteger(seq)) return this.receipts.find(seq, t.index, hash);
    }
    return -1;
  }

  stats(t: TableState, key: string, hash: number, now: number): KeyStats {
    const q = t.quota;
    const row = t.keys.find(key, hash);
    let s: Float64Array;
    let base = 0;
    if (row < 0) {
      s = this.scratchRow(q.stride);
    } else {
      s = t.keys.rows;
      base = row * q.stride;
    }
    const limits: LimitStats[] = [];
    for (const l of q.limits) {
      const o = base + l.offset;
      l.impl.sync(s, o, l, now);
      const available = l.impl.available(s, o, l);
      limits.push({
        name: l.name,
        unit: l.unit,
        limit: l.capacity,
        used: l.impl.used(s, o, l),
        remaining: Math.max(0, available),
        resetMs: l.impl.resetMs(s, o, l, now),
      });
    }
    const extras = t.extras.get(key);
    let inFlight = 0;
    if (extras?.leases !== undefined)
      for (const l of extras.leases.values()) if (l.expiresAt > now) inFlight++;
    const first = q.limits[0];
    const current =
      first === undefined ? 0 : first.impl.windowStart(s, base + first.offset, first, now);
    const sameWindow = row >= 0 && s[base + ROW_STATS_WINDOW] === current;
    return {
      key,
      quota: q.name,
      limits,
      queued: extras?.waiting ?? 0,
      inFlight,
      approved: sameWindow ? s[base + ROW_APPROVED]! : 0,
      denied: sameWindow ? s[base + ROW_DENIED]! : 0,
    };
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
      for (const l of leases) {
        if (l.expiresAt <= now) continue;
        const x = this.extrasOf(t, key);
        x.leases ??= new Map<string, Lease>();
        x.leases.set(l.id, { id: l.id, requestId: l.requestId, expiresAt: l.expiresAt });
      }
    }
    this.examine(t, row, now);
  }

  // ---------------------------------------------------------------- time

  /** Runs every check due at or before `now` and drops what has expired. */
  advance(now: number): void {
    const timers = this.timers;
    while (timers.size > 0 && timers.peekAt() <= now) {
      const at = timers.peekAt();
      const index = timers.peekTable();
      const row = timers.peekRow();
      timers.pop();
      const t = this.tables[index];
      const key = t?.keys.keys[row];
      if (t === undefined || key === undefined) continue;
      const x = t.extras.get(key);
      if (x === undefined || x.scheduledAt !== at) continue; // superseded
      x.scheduledAt = 0;
      this.examine(t, row, now);
    }
    if (this.sweepAt !== 0 && now >= this.sweepAt) this.dropIdleRows(now);
    this.sweep(now);
  }

  nextWakeAt(): number {
    const at = this.timers.peekAt();
    return this.sweepAt !== 0 && this.sweepAt < at ? this.sweepAt : at;
  }

  /**
   * Keys without waiters or leases own no timer entry (16 bytes and a heap push saved per key):
   * a pass over the rows every `idleSweepMs` drops those whose state holds no information.
   */
  private dropIdleRows(now: number): void {
    let left = 0;
    for (const t of this.tables) {
      if (t === undefined) continue;
      const q = t.quota;
      // Re-read on every step: the last delete resets the table.
      for (let row = 0; row < t.keys.keys.length; row++) {
        const key = t.keys.keys[row];
        if (key === undefined || t.extras.has(key)) continue;
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

  private createRow(t: TableState, key: string, hash: number, now: number): number {
    if (this.sweepAt === 0) this.sweepAt = now + this.options.idleSweepMs * this.sweepPhase;
    return t.keys.create(key, hash);
  }

  private sweep(now: number): void {
    const ttl = this.options.idempotencyTtlMs;
    for (const [memo, e] of this.answers) {
      if (e.at + ttl > now) break;
      this.answers.delete(memo);
    }
    const receiptTtl = this.options.receiptTtlMs;
    for (const [memo, e] of this.issued) {
      if (e.at + receiptTtl > now) break;
      this.issued.delete(memo);
    }
    this.receipts.sweep(now);
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
    const q = t.quota;
    const keys = t.keys;
    // Every caller wrote the row or may now (refund, reset, load, admitted waiters, leases).
    keys.mark(row);
    const key = keys.keys[row]!;
    const s = keys.rows;
    const base = row * q.stride;
    let next = Infinity;
    const extras = t.extras.get(key);
    if (extras !== undefined) {
      this.expireLeases(extras, now);
      for (let i = extras.head; i < extras.queue.length; i++) {
        const w = extras.queue[i]!;
        if (w.done || w.deadline > now) continue;
        extras.waiting--;
        s[base + ROW_DENIED]! += 1;
        t.denied++;
        this.refuseWaiter(w, 'WAIT_TIMEOUT', q.name, this.reasonFor('WAIT_TIMEOUT', q, -1), now);
      }
      for (let w = extras.firstWaiter(); w !== undefined; w = extras.firstWaiter()) {
        if (q.concurrency !== undefined && (extras.leases?.size ?? 0) >= q.concurrency.max) break;
        const tooBig = this.costExceeds(q, w.input.cost, w.requestId, key);
        if (tooBig !== undefined) {
          // The limit was lowered under this waiter: it can never be admitted.
          w.done = true;
          extras.shift();
          w.pending.settle(tooBig);
          continue;
        }
        const refusing = this.check(q, s, base, now);
        if (refusing >= 0) {
          next = Math.min(next, now + Math.max(1, this.retry));
          break;
        }
        w.done = true;
        extras.shift();
        this.touchStats(q, s, base, now);
        w.pending.settle(
          this.admit(t, row, extras, w.input, w.requestId, now, now - w.enqueuedAt, w.hash),
        );
      }
      for (let i = extras.head; i < extras.queue.length; i++) {
        const w = extras.queue[i]!;
        if (!w.done && w.deadline < next) next = w.deadline;
      }
      if (extras.leases !== undefined && extras.leases.size > 0)
        next = Math.min(next, this.earliestLease(extras));
      if (extras.isEmpty()) t.extras.delete(key);
    }
    const live = t.extras.get(key);
    if (live !== undefined) {
      if (next !== Infinity) this.scheduleAt(live, t.index, row, Math.max(next, now + 1));
    } else if (rowIdleAt(q, s, base) <= now) {
      keys.delete(row);
    }
  }

  private expireLeases(extras: KeyExtras, now: number): void {
    if (extras.leases === undefined) return;
    for (const l of extras.leases.values()) if (l.expiresAt <= now) extras.leases.delete(l.id);
  }

  private earliestLease(extras: KeyExtras): number {
    let at = Infinity;
    if (extras.leases !== undefined)
      for (const l of extras.leases.values()) if (l.expiresAt < at) at = l.expiresAt;
    return at;
  }

  /** Keeps one live timer entry per key with waiters or leases: the earliest instant it is due. */
  private scheduleAt(x: KeyExtras, table: number, row: number, at: number): void {
    if (x.scheduledAt !== 0 && x.scheduledAt <= at) return;
    x.scheduledAt = at;
    this.timers.push(at, table, row);
  }

  // ---------------------------------------------------------------- shutdown and introspection

  /** Answers a waiter with a refusal: it leaves the queue charged nothing. */
  private refuseWaiter(
    w: Waiter,
    code: DecisionCode,
    quota: string,
    reason: string,
    now: number,
  ): void {
    w.done = true;
    const r = refusal(code, w.requestId, w.input.key, quota, reason);
    r.waitedMs = now - w.enqueuedAt;
    w.pending.settle(r);
  }

  private refuseAll(
    extras: KeyExtras,
    code: DecisionCode,
    quota: string,
    reason: string,
    now: number,
  ): void {
    for (let w = extras.firstWaiter(); w !== undefined; w = extras.firstWaiter()) {
      extras.shift();
      this.refuseWaiter(w, code, quota, reason, now);
    }
  }

  /** Answers every waiter (shutdown). */
  drain(code: DecisionCode, reason: string, now: number): void {
    for (const t of this.tables) {
      if (t === undefined) continue;
      for (const extras of t.extras.values())
        this.refuseAll(extras, code, t.quota.name, reason, now);
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
      remembered: this.answers.size + this.issued.size,
      waiters,
    };
  }
}
