import type { CalendarWindows } from '../time/calendar';
import type { AlgorithmName } from '../types';

/**
 * A limit after validation, with everything its algorithm needs precomputed. Algorithms keep
 * their state in a row of a Float64Array (no object per key), at `offset` within the row.
 */
export interface CompiledLimit {
  readonly name: string;
  readonly unit: string;
  readonly algorithm: AlgorithmName;
  /** The most a single request may cost (the limit, or the burst of a token bucket). */
  readonly capacity: number;
  readonly limit: number;
  readonly windowMs: number;
  readonly impl: LimitAlgorithm;
  /** Position of this limit's state within the key's row. */
  readonly offset: number;
  /** fixed_window with `align: calendar`. */
  readonly calendar: CalendarWindows | undefined;
  /** sliding_window in sub-buckets: sub-bucket length and ring size. */
  readonly bucketMs: number;
  readonly ringSize: number;
  /** sliding_window as an exact log: entries it holds (0: sub-buckets, or another algorithm). */
  readonly logSize: number;
  /** Each log entry is one unit of cost (a limit of requests), else an (instant, cost) pair. */
  readonly logUnits: boolean;
  /** Equal keys mean the same state layout and meaning, so state can be copied verbatim. */
  readonly layoutKey: string;
  /** The reason of a refusal by this limit: one string, not one per refusal. */
  readonly reached: string;
}

/**
 * The contract every algorithm keeps. `now` is always a parameter (epoch ms). A `now` earlier than
 * the instant the state was last brought to is a clock that stepped back: `sync` dates what the
 * state holds from the future back to `now` (it happened, in real time, no later than now), so it
 * counts from now for no longer than it counts when charged now: a step back never locks a key
 * longer than one window (or one refill of what it owes), and `retryAfter` stays the first instant
 * a retry succeeds. A row of zeros is a fresh state, and a state that is idle (see `idleAt`) is
 * equivalent to zeros.
 */
export interface LimitAlgorithm {
  /** Float64 slots of state per key. */
  slots(limit: CompiledLimit): number;
  /**
   * Bring the state to `now`: forward (roll windows, refill: never changes what is admitted), or
   * back after a clock step (what is dated after `now` is dated `now`).
   */
  sync(s: Float64Array, o: number, limit: CompiledLimit, now: number): void;
  /** The instant the state was last brought to (0: fresh); later than `now`: the clock stepped back. */
  syncedAt(s: Float64Array, o: number, limit: CompiledLimit): number;
  /**
   * Why numbers read from outside the engine (a stored row) cannot be a state this algorithm
   * wrote, naming the field; undefined when they can. Such a row is not loaded. A state dated
   * after now can be one (the clock was ahead when it was written): `sync` brings it back.
   */
  stateProblem(s: Float64Array, o: number, limit: CompiledLimit): string | undefined;
  /** Cost that could be admitted now (after sync). May be negative after recorded overuse. */
  available(s: Float64Array, o: number, limit: CompiledLimit): number;
  charge(s: Float64Array, o: number, limit: CompiledLimit, now: number, cost: number): void;
  /** Give back cost charged at `chargedAt`, only where it still counts (never over-admits). */
  refund(s: Float64Array, o: number, limit: CompiledLimit, chargedAt: number, cost: number): void;
  /** Ms from `now` (synced) until `cost` fits if nothing else happens; 0 when it fits now. */
  retryAfter(s: Float64Array, o: number, limit: CompiledLimit, now: number, cost: number): number;
  /** Cost counted against the limit now. */
  used(s: Float64Array, o: number, limit: CompiledLimit): number;
  /** Ms until the limit is wholly available again. */
  resetMs(s: Float64Array, o: number, limit: CompiledLimit, now: number): number;
  /** Start of the current window, for per-window counters. */
  windowStart(s: Float64Array, o: number, limit: CompiledLimit, now: number): number;
  /** Instant from which the state holds no information (equals a fresh state). */
  idleAt(s: Float64Array, o: number, limit: CompiledLimit): number;
  /**
   * A limit changing layout over the same window (another precision, or between sub-buckets and
   * a log) moves what still counts with these two: `counted` tells each cost (synced) with the
   * instant it stops counting, in that order, and `chargeUntil` charges a cost so that it counts
   * until that instant at least. Without them, the used amount is charged at `now`.
   */
  readonly counted?: (
    s: Float64Array,
    o: number,
    limit: CompiledLimit,
    visit: (until: number, cost: number) => void,
  ) => void;
  readonly chargeUntil?: (
    s: Float64Array,
    o: number,
    limit: CompiledLimit,
    now: number,
    cost: number,
    until: number,
  ) => void;
}
