import type { Decision } from '../types';
import type { PendingAcquire } from './waiters';
import { WriteOrder } from './write-order';

interface Remembered {
  readonly at: number;
  readonly answer: Decision | PendingAcquire;
  /** Which write this is, to tell it from older writes of the same memo in `answerOrder`. */
  readonly stamp: number;
}

/** One entry per (table, key, requestId). */
export const memoKey = (table: number, key: string, requestId: string): string =>
  `${table}\u0000${key}\u0000${requestId}`;

/**
 * What a shard remembers of client requestIds: the first answer, for `ttlMs` (a repeat gets it
 * again), and the receipt of an admitted request (release and usage find it), as long as the
 * receipt ring holds it.
 *
 * Both maps are bounded: a client that sends a new id with every request at 100 000/s would
 * otherwise keep millions of answers (the 60 s window) and receipts' ids (10 min) alive, and run
 * the process out of memory. Past `maxAnswers` the oldest answer is forgotten early, and an id
 * whose receipt the ring overwrote is forgotten with it: at such rates the idempotency window is
 * the last `maxAnswers` ids of the shard rather than 60 s.
 *
 * Both are kept in the order entries were written, which is time order, so a sweep stops at the
 * first live entry: a rewrite moves an entry to the end instead of refreshing it in place (a
 * refreshed entry at the front would stop every later sweep and the map would grow). That order is
 * a WriteOrder beside each map, not the map's own iteration order (see write-order.ts).
 */
export class Idempotency {
  private readonly answers = new Map<string, Remembered>();
  /** memo -> receipt sequence number; sequence numbers grow, so this is receipt order too. */
  private readonly issued = new Map<string, number>();
  private readonly answerOrder = new WriteOrder();
  private readonly issueOrder = new WriteOrder();
  private writes = 0;
  private readonly answerIsCurrent = (memo: string, stamp: number): boolean =>
    this.answers.get(memo)?.stamp === stamp;
  private readonly issueIsCurrent = (memo: string, receipt: number): boolean =>
    this.issued.get(memo) === receipt;

  constructor(
    private readonly ttlMs: number,
    private readonly maxAnswers: number,
    private readonly maxIssued: number,
  ) {}

  get size(): number {
    return this.answers.size + this.issued.size;
  }

  /** The answer first given to this memo, while it is remembered. */
  recall(memo: string, now: number): Decision | PendingAcquire | undefined {
    const seen = this.answers.get(memo);
    return seen !== undefined && seen.at + this.ttlMs > now ? seen.answer : undefined;
  }

  remember(memo: string, answer: Decision | PendingAcquire, now: number): void {
    const stamp = ++this.writes;
    this.answers.set(memo, { at: now, answer, stamp });
    this.answerOrder.push(memo, stamp);
    if (this.answers.size > this.maxAnswers) {
      const oldest = this.answerOrder.shift(this.answerIsCurrent);
      if (oldest !== undefined) this.answers.delete(oldest);
    }
  }

  /** The receipt of the request admitted under this memo (receipt numbers grow). */
  issue(memo: string, receipt: number): void {
    this.issued.set(memo, receipt);
    this.issueOrder.push(memo, receipt);
    if (this.issued.size > this.maxIssued) {
      const oldest = this.issueOrder.shift(this.issueIsCurrent);
      if (oldest !== undefined) this.issued.delete(oldest);
    }
  }

  receiptOf(memo: string): number | undefined {
    return this.issued.get(memo);
  }

  /** The clock stepped back to `now`: an answer given later is remembered from now, no longer. */
  stepBack(now: number): void {
    for (const [memo, r] of this.answers) {
      if (r.at > now) this.answers.set(memo, { ...r, at: now });
    }
  }

  /** Forgets answers past their TTL, and ids whose receipt is older than `oldestReceipt`. */
  sweep(now: number, oldestReceipt: number): void {
    this.answerOrder.evictWhile(this.answerIsCurrent, (memo) => {
      if (this.answers.get(memo)!.at + this.ttlMs > now) return false;
      return this.answers.delete(memo);
    });
    this.issueOrder.evictWhile(this.issueIsCurrent, (memo, seq) => {
      if (seq >= oldestReceipt) return false;
      return this.issued.delete(memo);
    });
  }
}
