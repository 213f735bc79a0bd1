import type { Decision } from '../types';
import type { PendingAcquire } from './waiters';

interface Remembered {
  readonly at: number;
  readonly answer: Decision | PendingAcquire;
  /** Which write of the memo this is: older entries of it in the order ring are stale. */
  readonly write: number;
}

interface Issued {
  readonly receipt: number;
  readonly write: number;
}

/** One entry per (table, key, requestId). */
export const memoKey = (table: number, key: string, requestId: string): string =>
  `${table}\u0000${key}\u0000${requestId}`;

/**
 * The memos of a map in the order they were written, at most `capacity`: the oldest is found in
 * O(1). Iterating a Map from its front would not do: V8 leaves deleted entries as holes until the
 * table is rebuilt, so `keys().next()` after many deletions walks every hole, and evicting that way
 * on each write cost 100x the write itself.
 */
class WriteOrder {
  private readonly memos: (string | undefined)[];
  private readonly writes: Float64Array;
  private head = 0;
  private count = 0;

  constructor(private readonly capacity: number) {
    this.memos = new Array<string | undefined>(capacity);
    this.writes = new Float64Array(capacity);
  }

  get full(): boolean {
    return this.count === this.capacity;
  }

  get size(): number {
    return this.count;
  }

  push(memo: string, write: number): void {
    const slot = (this.head + this.count) % this.capacity;
    this.memos[slot] = memo;
    this.writes[slot] = write;
    this.count++;
  }

  /** The oldest memo and its write, or undefined when empty. */
  peekMemo(): string | undefined {
    return this.count === 0 ? undefined : this.memos[this.head];
  }

  peekWrite(): number {
    return this.writes[this.head]!;
  }

  shift(): void {
    this.memos[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count--;
  }
}

/**
 * What a shard remembers of client requestIds: the first answer, for `ttlMs` (a repeat gets it
 * again), and the receipt of an admitted request (release and usage find it), as long as the
 * receipt ring holds it.
 *
 * Both are bounded: a client that sends a new id with every request at 100 000/s would otherwise
 * keep six million answers alive (the 60 s window) and run the process out of memory. Past
 * `maxAnswers` writes the oldest answer is forgotten early, and an id whose receipt the ring
 * overwrote is forgotten with it: at such rates the idempotency window is the shard's newest
 * `maxAnswers` ids rather than 60 s.
 *
 * Each map has a ring of its memos in write order, so eviction and the sweep take the oldest in
 * O(1); a memo written again gets a new write number and its older ring entry is skipped as stale.
 */
export class Idempotency {
  private readonly answers = new Map<string, Remembered>();
  private readonly answerOrder: WriteOrder;
  private readonly issued = new Map<string, Issued>();
  private readonly issueOrder: WriteOrder;
  private writes = 0;

  constructor(
    private readonly ttlMs: number,
    maxAnswers: number,
    maxIssued: number,
  ) {
    this.answerOrder = new WriteOrder(maxAnswers);
    this.issueOrder = new WriteOrder(maxIssued);
  }

  get size(): number {
    return this.answers.size + this.issued.size;
  }

  /** The answer first given to this memo, while it is remembered. */
  recall(memo: string, now: number): Decision | PendingAcquire | undefined {
    const seen = this.answers.get(memo);
    return seen !== undefined && seen.at + this.ttlMs > now ? seen.answer : undefined;
  }

  remember(memo: string, answer: Decision | PendingAcquire, now: number): void {
    if (this.answerOrder.full) this.forgetOldestAnswer();
    const write = ++this.writes;
    this.answers.set(memo, { at: now, answer, write });
    this.answerOrder.push(memo, write);
  }

  /** The receipt of the request admitted under this memo. */
  issue(memo: string, receipt: number): void {
    if (this.issueOrder.full) this.forgetOldestIssued();
    const write = ++this.writes;
    this.issued.set(memo, { receipt, write });
    this.issueOrder.push(memo, write);
  }

  receiptOf(memo: string): number | undefined {
    return this.issued.get(memo)?.receipt;
  }

  /** Forgets answers past their TTL, and ids whose receipt is older than `oldestReceipt`. */
  sweep(now: number, oldestReceipt: number): void {
    for (let memo = this.answerOrder.peekMemo(); memo !== undefined;) {
      const e = this.answers.get(memo);
      if (e !== undefined && e.write === this.answerOrder.peekWrite()) {
        if (e.at + this.ttlMs > now) break;
        this.answers.delete(memo);
      }
      this.answerOrder.shift();
      memo = this.answerOrder.peekMemo();
    }
    for (let memo = this.issueOrder.peekMemo(); memo !== undefined;) {
      const e = this.issued.get(memo);
      if (e !== undefined && e.write === this.issueOrder.peekWrite()) {
        if (e.receipt >= oldestReceipt) break;
        this.issued.delete(memo);
      }
      this.issueOrder.shift();
      memo = this.issueOrder.peekMemo();
    }
  }

  private forgetOldestAnswer(): void {
    const memo = this.answerOrder.peekMemo()!;
    if (this.answers.get(memo)?.write === this.answerOrder.peekWrite()) this.answers.delete(memo);
    this.answerOrder.shift();
  }

  private forgetOldestIssued(): void {
    const memo = this.issueOrder.peekMemo()!;
    if (this.issued.get(memo)?.write === this.issueOrder.peekWrite()) this.issued.delete(memo);
    this.issueOrder.shift();
  }
}
