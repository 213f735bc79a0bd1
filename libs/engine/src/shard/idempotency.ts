import type { Decision } from '../types';
import type { PendingAcquire } from './waiters';

interface Remembered {
  readonly at: number;
  readonly answer: Decision | PendingAcquire;
}

interface Issued {
  readonly at: number;
  readonly receipt: number;
}

/** One entry per (table, key, requestId). */
export const memoKey = (table: number, key: string, requestId: string): string =>
  `${table}\u0000${key}\u0000${requestId}`;

/**
 * What a shard remembers of client requestIds: the first answer, for `ttlMs` (a repeat gets it
 * again), and the receipt of an admitted request, for `receiptTtlMs` (release and usage find it).
 * Both maps are kept in the order entries were written, which is time order, so a sweep stops at
 * the first live entry: a rewrite deletes first, so it moves to the end instead of refreshing in
 * place (a refreshed entry at the front would stop every later sweep and the map would grow).
 */
export class Idempotency {
  private readonly answers = new Map<string, Remembered>();
  private readonly issued = new Map<string, Issued>();

  constructor(
    private readonly ttlMs: number,
    private readonly receiptTtlMs: number,
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
  }

  /** The receipt of the request admitted under this memo. */
  issue(memo: string, receipt: number, now: number): void {
    this.issued.delete(memo);
    this.issued.set(memo, { at: now, receipt });
  }

  receiptOf(memo: string): number | undefined {
    return this.issued.get(memo)?.receipt;
  }

  sweep(now: number): void {
    for (const [memo, e] of this.answers) {
      if (e.at + this.ttlMs > now) break;
      this.answers.delete(memo);
    }
    for (const [memo, e] of this.issued) {
      if (e.at + this.receiptTtlMs > now) break;
      this.issued.delete(memo);
    }
  }
}
