import type { AcquireInput, Decision } from '../types';

/** A request parked in its key's FIFO queue. Costs no thread: a resolve callback and a record. */
export interface Waiter {
  readonly input: AcquireInput;
  readonly requestId: string;
  readonly enqueuedAt: number;
  readonly deadline: number;
  /** Hash of (quota, key), which receipts use instead of the key. */
  readonly hash: number;
  readonly pending: PendingAcquire;
  done: boolean;
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
}

/**
 * The answer to a request that waits. `result` settles exactly once: admitted in FIFO order,
 * timed out, cancelled, or answered when the engine shuts down.
 */
export class PendingAcquire {
  readonly result: Promise<Decision>;
  private resolver!: (d: Decision) => void;
  settled: Decision | undefined;

  constructor(
    readonly requestId: string,
    private readonly canceller: (p: PendingAcquire, now: number) => boolean,
  ) {
    this.result = new Promise<Decision>((resolve) => {
      this.resolver = resolve;
    });
  }

  /** Leave the queue (the caller went away). Answers WAIT_TIMEOUT; false if already answered. */
  cancel(now: number): boolean {
    return this.settled === undefined && this.canceller(this, now);
  }

  settle(decision: Decision): void {
    if (this.settled !== undefined) return;
    this.settled = decision;
    this.resolver(decision);
  }
}
