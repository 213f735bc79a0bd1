import type { Decision } from '../types';
import type { PendingAcquire } from './waiters';

interface Remembered {
  readonly at: number;
  readonly answer: Decision | PendingAcquire;
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
 * first live entry: a rewrite deletes first, so it moves to the end instead of refreshing in place
 * (a refreshed entry at the front would stop every later sweep and the map would grow).
 */
export class Idempotency {
  private readonly answers = new Map<string, Remembered>();
  /** memo -> receipt sequence number; sequence numbers grow, so this is receipt order too. */
  private readonly issued = new Map<string, number>();

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
    this.answers.delete(memo);
    this.answers.set(memo, { at: now, answer });
    if (this.answers.size > this.maxAnswers) this.answers.delete(firstKey(this.answers));
  }

  /** The receipt of the request admitted under this memo. */
  issue(memo: string, receipt: number): void {
    this.issued.delete(memo);
    this.issued.set(memo, receipt);
    if (this.issued.size > this.maxIssued) this.issued.delete(firstKey(this.issued));
  }

  receiptOf(memo: string): number | undefined {
    return this.issued.get(memo);
  }

  /** Forgets answers past their TTL, and ids whose receipt is older than `oldestReceipt`. */
  sweep(now: number, oldestReceipt: number): void {
    for (const [memo, e] of this.answers) {
      if (e.at + this.ttlMs > now) break;
      this.answers.delete(memo);
    }
    for (const [memo, seq] of this.issued) {
      if (seq >= oldestReceipt) break;
      this.issued.delete(memo);
    }
  }
}

function firstKey<K>(map: Map<K, unknown>): K {
  return map.keys().next().value as K;
}
