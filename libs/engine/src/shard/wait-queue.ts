import { ROW_DENIED, type CompiledQuota } from '../quota/compile';
import type { Cost, DecisionCode } from '../types';
import { refusal, type Reply } from './decision';
import { chargeAll, check, reasonFor, type Costs } from './limit-check';
import type { TableState } from './table';
import { TimerHeap } from './timer-heap';
import type { KeyExtras, Waiter } from './waiters';

/**
 * The FIFO wait queues of a shard's keys: when each key is due next, and what a queue does with
 * time (deadlines, simulated admissions). Admitting a waiter is the shard's: it charges as an
 * acquire does.
 */

/**
 * One live timer entry per key with waiters or leases, at the earliest instant it is due, in one
 * heap per shard. Entries a key superseded are recognised by `scheduledAt` and skipped.
 */
export class KeyTimers {
  private readonly heap = new TimerHeap();

  get size(): number {
    return this.heap.size;
  }

  nextAt(): number {
    return this.heap.peekAt();
  }

  schedule(x: KeyExtras, table: number, row: number, at: number): void {
    if (x.scheduledAt !== 0 && x.scheduledAt <= at) return;
    x.scheduledAt = at;
    this.heap.push(at, table, row);
  }

  /** Calls `examine` for every key due at or before `now`. */
  runDue(
    now: number,
    tables: readonly (TableState | undefined)[],
    examine: (t: TableState, row: number) => void,
  ): void {
    const heap = this.heap;
    while (heap.size > 0 && heap.peekAt() <= now) {
      const at = heap.peekAt();
      const t = tables[heap.peekTable()];
      const row = heap.peekRow();
      heap.pop();
      const key = t?.keys.keys[row];
      if (t === undefined || key === undefined) continue;
      const x = t.extras.get(key);
      if (x === undefined || x.scheduledAt !== at) continue; // superseded
      x.scheduledAt = 0;
      examine(t, row);
    }
  }

  /** Rewrites row numbers after a table compaction. */
  remap(table: number, moved: ReadonlyMap<number, number>): void {
    this.heap.remap(table, moved);
  }

  /**
   * The clock stepped back to `now`: every entry is due now (an early examination only schedules
   * the next one; a late one would stall the key until the clock came back). Keys move their own
   * `scheduledAt` along (KeyExtras.stepBack).
   */
  stepBack(now: number): void {
    this.heap.dueBy(now);
  }
}

/** A waiter's refusal: it leaves the queue charged nothing. */
export function waiterRefusal(w: Waiter, code: DecisionCode, reason: string, now: number): Reply {
  const r = refusal(code, w.requestId, w.input.key, w.table.quota.name, reason);
  r.waitedMs = Math.max(0, now - w.enqueuedAt);
  return r;
}

/** Answers every waiter of the key with a refusal (the quota was deleted, or shutdown). */
export function refuseAll(
  extras: KeyExtras,
  code: DecisionCode,
  reason: string,
  now: number,
): void {
  for (let w = extras.firstWaiter(); w !== undefined; w = extras.firstWaiter()) {
    extras.shift();
    w.settle(waiterRefusal(w, code, reason, now));
  }
}

/** Answers WAIT_TIMEOUT to the waiters whose deadline came, counting them denied in the row. */
export function timeOutWaiters(
  t: TableState,
  extras: KeyExtras,
  s: Float64Array,
  base: number,
  now: number,
): void {
  const reason = reasonFor('WAIT_TIMEOUT', t.quota, -1);
  for (let i = extras.head; i < extras.queue.length; i++) {
    const w = extras.queue[i]!;
    if (w.done || w.deadline > now) continue;
    extras.waiting--;
    s[base + ROW_DENIED]! += 1;
    t.denied++;
    w.settle(waiterRefusal(w, 'WAIT_TIMEOUT', reason, now));
  }
}

/** The earliest deadline of a waiting request or expiry of a live lease (Infinity: none). */
export function nextDue(extras: KeyExtras, now: number): number {
  let next = extras.earliestLease(now);
  for (let i = extras.head; i < extras.queue.length; i++) {
    const w = extras.queue[i]!;
    if (!w.done && w.deadline < next) next = w.deadline;
  }
  return next;
}

/**
 * When `cost` would be admitted behind the key's current waiters, if nothing else happened: the
 * waiters are admitted one by one, in order, on `scratch` (a copy of the key's row), each at the
 * instant its limits allow. Waiters that would reach their deadline first are skipped, as they
 * will time out charging nothing. Returns ms from `now`, at least 1.
 */
export function retryBehindWaiters(
  q: CompiledQuota,
  scratch: Float64Array,
  extras: KeyExtras,
  cost: Cost | undefined,
  now: number,
  costs: Costs,
): number {
  let at = now;
  for (let i = extras.head; i < extras.queue.length; i++) {
    const w = extras.queue[i]!;
    if (w.done) continue;
    costs.fill(q, w.input.cost);
    const admitted = at + (check(q, costs, scratch, 0, at)?.retryMs ?? 0);
    if (admitted >= w.deadline) continue;
    at = admitted;
    check(q, costs, scratch, 0, at);
    chargeAll(q, costs, scratch, 0, at);
  }
  costs.fill(q, cost);
  return Math.max(1, at + (check(q, costs, scratch, 0, at)?.retryMs ?? 0) - now);
}
