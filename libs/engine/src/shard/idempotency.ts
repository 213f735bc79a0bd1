import type { Decision, DecisionCode } from '../types';
import { Reply } from './decision';
import { PendingAcquire } from './waiters';

/**
 * One entry per (table, key, requestId), as one flat string: `join` copies the parts, where a
 * template literal makes a cons string that keeps every part (the request's own strings) alive.
 */
export const memoKey = (table: number, key: string, requestId: string): string =>
  [table, key, requestId].join('\u0000');

// Per remembered id, W float64 in one array: [answeredAt, receipt, flags, limit, remaining,
// resetMs, retryAfterMs, waitedMs]. answeredAt -1: no answer to give again (past the window, or a
// receipt alone); receipt -1: none; flags = code * 4 + shadow * 2 + allowed.
const AT = 0;
const RECEIPT = 1;
const FLAGS = 2;
const LIMIT = 3;
const REMAINING = 4;
const RESET = 5;
const RETRY = 6;
const WAITED = 7;
const W = 8;
const INITIAL = 64;
/**
 * Characters of (quota, key, requestId) a shard keeps per id on average (an SDK id and a key of up
 * to 60 characters fit): the longest keys and ids (256 and 128 characters) make fewer ids fit, not
 * more memory.
 */
export const CHARS_PER_ID = 96;

/** Codes by number, in the order first seen (DecisionCode has nine). */
const codes: DecisionCode[] = [];
function codeNumber(code: DecisionCode): number {
  const i = codes.indexOf(code);
  return i >= 0 ? i : codes.push(code) - 1;
}

/**
 * What a shard remembers of requestIds: the first answer, for `ttlMs` (a repeat gets it again),
 * and the receipt of the admitted request (release and usage find it while the receipt ring holds
 * it). At most `max` ids, all included, and `max * CHARS_PER_ID` characters of their memos: past
 * either the oldest id is forgotten, answer and receipt link alike, so a client sending more new
 * ids than that has a shorter window (the newest ids).
 *
 * An id costs its memo string, one Map entry and one slot of a ring: W numbers in a Float64Array
 * and four references (the memo, the limit's name and the reason, which are shared strings, and a
 * lease id or a waiter). An answer is kept as its numbers and rebuilt for a repeat, with the
 * repeat's own requestId, key and quota name (the same, or it would not be a repeat).
 *
 * Slots are taken in time order and never refreshed in place (an id used again after its window
 * takes a new slot and leaves a hole), so both sweeps stop at the first live slot.
 */
export class Idempotency {
  private capacity = 0;
  private nums!: Float64Array;
  private memos!: (string | undefined)[];
  private names!: string[];
  private reasons!: (string | undefined)[];
  /** A waiter's handle while it waits, else the answer's leaseId. */
  private refs!: (PendingAcquire | string | undefined)[];
  /** memo -> slot; a slot holds the memo it is keyed by. */
  private slots = new Map<string, number>();
  /** Slots in use are numbered [oldest, next), slot = number & (capacity - 1). */
  private oldest = 0;
  private next = 0;
  /** Numbers before this one have no answer left to give (only a receipt, or nothing). */
  private answered = 0;
  /** Characters of the memos held, at most `maxChars`. */
  private chars = 0;
  private readonly maxChars: number;

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
  ) {
    this.maxChars = max * CHARS_PER_ID;
    this.resize(INITIAL);
  }

  get size(): number {
    return this.slots.size;
  }

  /** The slot of `memo`, or -1. */
  find(memo: string): number {
    return this.slots.get(memo) ?? -1;
  }

  /** The answer first given in `slot` while it is within the window, as the repeat's reply. */
  recall(
    slot: number,
    now: number,
    requestId: string,
    key: string,
    quota: string,
  ): Decision | PendingAcquire | undefined {
    const n = this.nums;
    const o = slot * W;
    const at = n[o + AT]!;
    if (at < 0 || at + this.ttlMs <= now) return undefined;
    const ref = this.refs[slot];
    if (ref instanceof PendingAcquire) return ref.repeat();
    const flags = n[o + FLAGS]!;
    const r = new Reply((flags & 1) === 1, codes[flags >> 2]!, requestId, key, quota);
    r.limit = n[o + LIMIT]!;
    r.remaining = n[o + REMAINING]!;
    r.resetMs = n[o + RESET]!;
    r.retryAfterMs = n[o + RETRY]!;
    r.waitedMs = n[o + WAITED]!;
    r.limitName = this.names[slot]!;
    r.leaseId = ref;
    r.shadow = (flags & 2) === 2;
    r.reason = this.reasons[slot];
    return r;
  }

  /**
   * The newest slot, for a request under `memo` decided at `now`; `old` is the memo's slot (-1:
   * none), whose answer is past its window: it becomes a hole, its receipt carried over until
   * the new request is admitted (as before, the id names its latest admitted request).
   */
  open(memo: string, old: number, now: number): number {
    const receipt = old >= 0 ? this.nums[old * W + RECEIPT]! : -1;
    if (old >= 0) this.clear(old);
    const slot = this.take(memo);
    this.nums[slot * W + AT] = now;
    this.nums[slot * W + RECEIPT] = receipt;
    return slot;
  }

  /** Keeps `answer` as the one `slot` gives again (a waiter's handle until it is answered). */
  remember(slot: number, answer: Decision | PendingAcquire): void {
    if (answer instanceof PendingAcquire) this.refs[slot] = answer;
    else this.write(slot, answer);
  }

  /** A waiter was answered: its slot keeps the answer, not the waiter. */
  settle(memo: string, pending: PendingAcquire, answer: Decision): void {
    const slot = this.slots.get(memo);
    if (slot !== undefined && this.refs[slot] === pending) this.write(slot, answer);
  }

  /** The receipt of the request just admitted in `slot`. */
  issueAt(slot: number, receipt: number): void {
    this.nums[slot * W + RECEIPT] = receipt;
  }

  /** The receipt of a request admitted from the queue, under `memo`: its slot, else a new one. */
  issue(memo: string, receipt: number): void {
    let slot = this.slots.get(memo);
    if (slot === undefined) {
      slot = this.take(memo);
      this.nums[slot * W + AT] = -1;
    }
    this.nums[slot * W + RECEIPT] = receipt;
  }

  receiptOf(memo: string): number | undefined {
    const slot = this.slots.get(memo);
    const receipt = slot === undefined ? -1 : this.nums[slot * W + RECEIPT]!;
    return receipt < 0 ? undefined : receipt;
  }

  /** The clock stepped back to `now`: an answer given later is remembered from now, no longer. */
  stepBack(now: number): void {
    const n = this.nums;
    for (let i = this.answered; i < this.next; i++) {
      const at = (i & (this.capacity - 1)) * W + AT;
      if (n[at]! > now) n[at] = now;
    }
  }

  /**
   * Forgets answers past their window (their strings and waiters go; the id stays while it may
   * name a receipt), then ids with neither an answer nor a receipt at or after `oldestReceipt`.
   */
  sweep(now: number, oldestReceipt: number): void {
    const n = this.nums;
    while (this.answered < this.next) {
      const slot = this.answered & (this.capacity - 1);
      const at = n[slot * W + AT]!;
      if (at >= 0 && at + this.ttlMs > now) break;
      this.forgetAnswer(slot);
      this.answered++;
    }
    while (this.oldest < this.answered) {
      const slot = this.oldest & (this.capacity - 1);
      if (this.memos[slot] !== undefined && n[slot * W + RECEIPT]! >= oldestReceipt) break;
      this.clear(slot);
      this.oldest++;
    }
    if (this.oldest === this.next && this.capacity > INITIAL) this.reset();
  }

  /** A new slot at the end for `memo`: the oldest id is forgotten past `max`. */
  private take(memo: string): number {
    while (
      this.next > this.oldest &&
      (this.next - this.oldest >= this.max || this.chars + memo.length > this.maxChars)
    ) {
      this.dropOldest();
    }
    if (this.next - this.oldest >= this.capacity) this.grow();
    const slot = this.next++ & (this.capacity - 1);
    this.memos[slot] = memo;
    this.chars += memo.length;
    this.slots.set(memo, slot);
    return slot;
  }

  private write(slot: number, d: Decision): void {
    const n = this.nums;
    const o = slot * W;
    n[o + FLAGS] = codeNumber(d.code) * 4 + (d.shadow ? 2 : 0) + (d.allowed ? 1 : 0);
    n[o + LIMIT] = d.limit;
    n[o + REMAINING] = d.remaining;
    n[o + RESET] = d.resetMs;
    n[o + RETRY] = d.retryAfterMs;
    n[o + WAITED] = d.waitedMs;
    this.names[slot] = d.limitName;
    this.reasons[slot] = d.reason;
    this.refs[slot] = d.leaseId;
  }

  private forgetAnswer(slot: number): void {
    this.nums[slot * W + AT] = -1;
    this.names[slot] = '';
    this.reasons[slot] = undefined;
    this.refs[slot] = undefined;
  }

  /** Empties `slot`: its memo is forgotten (a hole until the oldest passes it). */
  private clear(slot: number): void {
    const memo = this.memos[slot];
    if (memo !== undefined) {
      this.slots.delete(memo);
      this.memos[slot] = undefined;
      this.chars -= memo.length;
    }
    this.forgetAnswer(slot);
    this.nums[slot * W + RECEIPT] = -1;
  }

  private dropOldest(): void {
    this.clear(this.oldest & (this.capacity - 1));
    this.oldest++;
    if (this.answered < this.oldest) this.answered = this.oldest;
  }

  private grow(): void {
    this.resize(this.capacity * 2);
  }

  /** Nothing is remembered: back to the initial size, so memory returns to its baseline. */
  private reset(): void {
    this.slots = new Map<string, number>();
    this.resize(INITIAL);
  }

  /** New arrays of `cap` slots (a power of two), each id at its number's place in them. */
  private resize(cap: number): void {
    const from = this.capacity - 1;
    const nums = new Float64Array(cap * W);
    const memos = new Array<string | undefined>(cap).fill(undefined);
    const names = new Array<string>(cap).fill('');
    const reasons = new Array<string | undefined>(cap).fill(undefined);
    const refs = new Array<PendingAcquire | string | undefined>(cap).fill(undefined);
    for (let i = this.oldest; i < this.next; i++) {
      const a = i & from;
      const b = i & (cap - 1);
      for (let k = 0; k < W; k++) nums[b * W + k] = this.nums[a * W + k]!;
      const memo = this.memos[a];
      memos[b] = memo;
      names[b] = this.names[a]!;
      reasons[b] = this.reasons[a];
      refs[b] = this.refs[a];
      if (memo !== undefined) this.slots.set(memo, b);
    }
    this.capacity = cap;
    this.nums = nums;
    this.memos = memos;
    this.names = names;
    this.reasons = reasons;
    this.refs = refs;
  }
}
