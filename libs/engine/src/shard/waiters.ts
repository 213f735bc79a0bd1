import type { AcquireInput, Decision } from '../types';
import type { TableState } from './table';

/** What a waiter asks of the shard that queued it. */
export interface WaitHost {
  /** The last caller left: take the waiter out of its queue, answered WAIT_TIMEOUT. */
  cancelWaiter(waiter: Waiter, now: number): boolean;
  /** The answer of a caller that leaves while others still wait on the same requestId. */
  leftAnswer(waiter: Waiter, now: number): Decision;
  /** The waiter was answered (its callers are told next). */
  settled(waiter: Waiter, answer: Decision): void;
}

/**
 * The answer to a request that waits, one per caller. `result` settles exactly once: admitted in
 * FIFO order, timed out, cancelled, or answered when the engine shuts down. Callers that repeat a
 * waiting request's id get handles of their own on the same waiter, so one leaving never cancels
 * the others' wait.
 */
export class PendingAcquire {
  readonly result: Promise<Decision>;
  settled: Decision | undefined;
  private resolver!: (d: Decision) => void;

  constructor(
    readonly requestId: string,
    private readonly waiter: Waiter,
  ) {
    this.result = new Promise<Decision>((resolve) => {
      this.resolver = resolve;
    });
  }

  /**
   * What a caller that repeats this request's id gets: the answer once there is one, or else a
   * handle of its own on the same wait.
   */
  repeat(): Decision | PendingAcquire {
    return this.waiter.outcome ?? this.waiter.join();
  }

  /** Leave the queue (the caller went away). Answers WAIT_TIMEOUT; false if already answered. */
  cancel(now: number): boolean {
    return this.settled === undefined && this.waiter.leave(this, now);
  }

  settle(decision: Decision): void {
    if (this.settled !== undefined) return;
    this.settled = decision;
    this.resolver(decision);
  }
}

/** A request parked in its key's FIFO queue. Costs no thread: a record and its callers' promises. */
export class Waiter {
  done = false;
  /** The answer once done: what a repeat of this requestId gets. */
  outcome: Decision | undefined;
  /** The first caller, or every caller once another joined. */
  private callers: PendingAcquire | PendingAcquire[];

  constructor(
    readonly table: TableState,
    readonly input: AcquireInput,
    readonly requestId: string,
    /** Both move only when the clock steps back (`stepBack`). */
    public enqueuedAt: number,
    public deadline: number,
    /** Hash of (quota, key), which receipts use instead of the key. */
    readonly hash: number,
    private readonly host: WaitHost,
  ) {
    this.callers = new PendingAcquire(requestId, this);
  }

  /** The first caller's handle. */
  get pending(): PendingAcquire {
    const c = this.callers;
    return Array.isArray(c) ? c[0]! : c;
  }

  /** A handle for a caller that repeats this request's id while it waits. */
  join(): PendingAcquire {
    const p = new PendingAcquire(this.requestId, this);
    const c = this.callers;
    if (Array.isArray(c)) c.push(p);
    else this.callers = [c, p];
    return p;
  }

  /** Answers every caller still waiting; the waiter is done. */
  settle(decision: Decision): void {
    this.done = true;
    this.outcome = decision;
    this.host.settled(this, decision);
    const c = this.callers;
    if (Array.isArray(c)) for (const p of c) p.settle(decision);
    else c.settle(decision);
  }

  /**
   * The clock stepped back to `now`, before this waiter was queued: it was queued no later than
   * now, so it waits its budget from now at most, never until the clock comes back.
   */
  stepBack(now: number): void {
    if (this.enqueuedAt <= now) return;
    this.deadline = Math.min(this.deadline, now + (this.deadline - this.enqueuedAt));
    this.enqueuedAt = now;
  }

  leave(p: PendingAcquire, now: number): boolean {
    const c = this.callers;
    if (this.done) return false;
    if (Array.isArray(c)) {
      let waiting = 0;
      for (const other of c) if (other !== p && other.settled === undefined) waiting++;
      if (waiting > 0) {
        p.settle(this.host.leftAnswer(this, now));
        return true;
      }
    }
    return this.host.cancelWaiter(this, now);
  }
}

export interface Lease {
  readonly id: string;
  readonly requestId: string;
  readonly expiresAt: number;
}

/** The rare per-key state: waiters and leases. Keys with neither have no such record. */
export class KeyExtras {
  readonly queue: Waiter[] = [];
  head = 0;
  /** Waiters not yet answered. */
  waiting = 0;
  leases: Map<string, Lease> | undefined;
  /** Instant of this key's live timer entry; 0: none. Older entries are recognised as stale. */
  scheduledAt = 0;

  firstWaiter(): Waiter | undefined {
    while (this.head < this.queue.length) {
      const w = this.queue[this.head]!;
      if (!w.done) return w;
      this.head++;
    }
    this.compact();
    return undefined;
  }

  shift(): void {
    this.head++;
    this.waiting--;
    if (this.head > 32 && this.head * 2 > this.queue.length) this.compact();
  }

  compact(): void {
    if (this.head === 0) return;
    this.queue.splice(0, this.head);
    this.head = 0;
  }

  isEmpty(): boolean {
    return this.waiting === 0 && (this.leases === undefined || this.leases.size === 0);
  }

  /**
   * The clock stepped back to `now`: a lease lasts `leaseTtlMs` from its admission, which came no
   * later than now; waiters wait their budget from now at most; a timer entry is due now.
   */
  stepBack(now: number, leaseTtlMs: number): void {
    const latest = now + leaseTtlMs;
    if (this.leases !== undefined) {
      for (const l of this.leases.values()) {
        if (l.expiresAt > latest) this.leases.set(l.id, { ...l, expiresAt: latest });
      }
    }
    for (let i = this.head; i < this.queue.length; i++) this.queue[i]!.stepBack(now);
    if (this.scheduledAt > now) this.scheduledAt = now;
  }

  expireLeases(now: number): void {
    if (this.leases === undefined) return;
    for (const l of this.leases.values()) if (l.expiresAt <= now) this.leases.delete(l.id);
  }

  /** Leases alive at `now`, counted without expiring any (a dry run leaves no trace). */
  liveLeases(now: number): number {
    let live = 0;
    if (this.leases !== undefined)
      for (const l of this.leases.values()) if (l.expiresAt > now) live++;
    return live;
  }

  /** The earliest expiry among leases alive at `now` (Infinity: none). */
  earliestLease(now: number): number {
    let at = Infinity;
    if (this.leases !== undefined)
      for (const l of this.leases.values())
        if (l.expiresAt > now && l.expiresAt < at) at = l.expiresAt;
    return at;
  }
}
