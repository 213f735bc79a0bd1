import type { NormalisedAcquire } from '@app/contracts';
import { costFor, refusal, type Decision } from '@app/engine';
import { shadowed, type ClusterQuotaEntry } from '../cluster-decision';
import type { LeaseGrant } from '../redis-quota-store';

/** A request waiting for the grant in flight, answered in arrival order. */
export interface Pending {
  readonly input: NormalisedAcquire;
  readonly requestId: string;
  /** A waiter's refusal is not its answer (it retries): not counted in the key's stats. */
  readonly counted: boolean;
  readonly resolve: (d: Decision) => void;
}

/**
 * One (quota, key)'s capacity lease on this replica: per limit, the units left of the slice Redis
 * charged, spendable until `deadline` (this process's monotonic clock, before Redis's `until`).
 */
export class Slice {
  readonly limits: number;
  left: number[];
  /** The grant's units per limit, its Redis charge instant and spend instants (release, usage). */
  until: readonly number[] = [];
  chargedAt = 0;
  /** The grant's sequence in Redis; 0: none to give back. */
  seq = 0;
  deadline = -Infinity;
  /** Redis's capacity minus used just after the grant: the replies' `remaining` adds `left`. */
  private remainingAfter: number[];
  private resetAt: number[];
  /** Demand: cost offered since the last ask, and its rate per second (smoothed). */
  offered: number[];
  rate: number[];
  askedAt: number;
  /** Whether an ask measured the demand yet (the first has nothing to measure over). */
  measured = false;
  readonly pending: Pending[] = [];
  asking = false;
  revoked = false;
  refusedUntil = -Infinity;
  private retryAt = 0;
  private refusing = 0;
  /** Decisions made from the slice since the last lease call: Redis's stats get them then. */
  approved = 0;
  denied = 0;
  lastUsed: number;

  constructor(
    readonly q: ClusterQuotaEntry,
    readonly key: string,
    now: number,
  ) {
    const n = q.limits.length;
    this.limits = n;
    this.left = new Array<number>(n).fill(0);
    this.remainingAfter = new Array<number>(n).fill(0);
    this.resetAt = new Array<number>(n).fill(now);
    this.offered = new Array<number>(n).fill(0);
    this.rate = new Array<number>(n).fill(0);
    this.askedAt = now;
    this.lastUsed = now;
  }

  offer(input: NormalisedAcquire): void {
    const ls = this.q.limits;
    for (let i = 0; i < this.limits; i++) this.offered[i]! += costFor(input.cost, ls[i]!.unit);
  }

  /** Whether the slice covers the request now, on every limit (nothing is taken). */
  covers(input: NormalisedAcquire, now: number): boolean {
    if (now >= this.deadline) return false;
    const ls = this.q.limits;
    for (let i = 0; i < this.limits; i++) {
      if (costFor(input.cost, ls[i]!.unit) > this.left[i]!) return false;
    }
    return true;
  }

  /** Takes the request's cost from every limit, or from none. */
  spend(input: NormalisedAcquire, now: number): boolean {
    if (!this.covers(input, now)) return false;
    const ls = this.q.limits;
    for (let i = 0; i < this.limits; i++) this.left[i]! -= costFor(input.cost, ls[i]!.unit);
    return true;
  }

  /** A grant arrived: `askedAt` is when it was asked, on this process's clock. */
  granted(grant: LeaseGrant, askedAt: number, horizonMs: number): void {
    const o = grant.outcome;
    const ls = this.q.limits;
    if (!o.allowed) {
      this.seq = 0;
      this.left.fill(0);
      this.deadline = -Infinity;
      // Redis said no: asking again before retryAfter is useless, unless another replica gives
      // capacity back, which the next ask (within the horizon) sees.
      this.refusedUntil = askedAt + Math.min(o.retryAfterMs, horizonMs);
      this.retryAt = askedAt + o.retryAfterMs;
      this.refusing = Math.max(0, o.refusing);
      this.remainingAfter.fill(0);
      return;
    }
    this.seq = o.seq;
    this.chargedAt = o.now;
    this.until = grant.until;
    this.left = [...grant.granted];
    // Redis's `now` is floored to the ms and came after `askedAt`: spending stops one ms early.
    let span = Infinity;
    for (const u of grant.until) span = Math.min(span, u - o.now);
    this.deadline = askedAt + span - 1;
    for (let i = 0; i < this.limits; i++) {
      const use = o.limits[i];
      this.remainingAfter[i] = Math.max(0, ls[i]!.capacity - (use?.used ?? 0));
      this.resetAt[i] = askedAt + (use?.resetMs ?? 0);
    }
    this.refusedUntil = -Infinity;
  }

  /** What Redis had left on limit `i` after this slice's last grant (0 after a refusal). */
  remaining(i: number): number {
    return this.remainingAfter[i]!;
  }

  /** The slice ends without a grant (store failure, revoked): nothing left to spend. */
  clear(): void {
    this.seq = 0;
    this.left.fill(0);
    this.deadline = -Infinity;
  }

  /** The engine's reply for a request admitted from the slice. */
  admitted(input: NormalisedAcquire, id: string, now: number): Decision {
    const d = refusal('OK', id, input.key, this.q.name, '');
    d.allowed = true;
    d.reason = undefined;
    const ls = this.q.limits;
    let index = 0;
    let least = Infinity;
    for (let i = 0; i < this.limits; i++) {
      const share = (this.remainingAfter[i]! + this.left[i]!) / ls[i]!.capacity;
      if (share < least) {
        least = share;
        index = i;
      }
    }
    const l = ls[index];
    if (l !== undefined) {
      d.limit = l.capacity;
      d.remaining = Math.min(l.capacity, this.remainingAfter[index]! + this.left[index]!);
      d.resetMs = Math.max(0, Math.ceil(this.resetAt[index]! - now));
      d.limitName = l.name;
    }
    return d;
  }

  /** The refusal Redis gave the last ask, while it holds. */
  refused(input: NormalisedAcquire, requestId: string, now: number): Decision {
    const l = this.q.limits[this.refusing];
    const d = refusal('RATE_LIMITED', requestId, input.key, this.q.name, '');
    // Replies carry whole ms (the contract's integers) and the monotonic clock has fractions:
    // rounded up, a retry at the hint is never early.
    d.retryAfterMs = Math.max(1, Math.ceil(this.retryAt - now));
    d.reason = `limit ${l?.name ?? ''} reached`;
    if (l !== undefined) {
      d.limit = l.capacity;
      d.remaining = 0;
      d.resetMs = Math.max(0, Math.ceil(this.resetAt[this.refusing]! - now), d.retryAfterMs);
      d.limitName = l.name;
    }
    return shadowed(this.q, d);
  }
}
