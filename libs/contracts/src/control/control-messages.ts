import type { KeyStats } from '../messages/stats';
import type { Scope } from '../quota-spec';
import type { RefusedKey } from './top-refused';

/** One quota's counts on one replica since it started (like Prometheus counters). */
export interface QuotaCount {
  readonly quota: string;
  readonly approved: number;
  readonly denied: number;
  /** Right now: requests waiting in this replica's queues. */
  readonly queued: number;
  /** Right now: keys this replica holds state for. */
  readonly activeKeys: number;
  /**
   * Where this replica decides the quota: `cluster` in Redis, `local` in its own memory (a
   * `scope: cluster` quota without Redis too). Absent from limiters that predate it.
   */
  readonly scope?: Scope;
  /**
   * The keys this replica refused most in the quota since its previous report, most first: at
   * most TOP_REFUSED_K, each key at most MAX_TOP_REFUSED_KEY_LENGTH characters. Absent when it
   * refused none (and from limiters that predate it).
   */
  readonly topRefused?: readonly RefusedKey[];
}

/** What a limiter publishes every STATS_REPORT_EVERY_MS on ControlNames.statsReport. */
export interface StatsReport {
  /** Unique per process run: a restarted limiter is a new replica. */
  readonly replica: string;
  /** Epoch ms on the limiter's clock. */
  readonly at: number;
  readonly quotas: readonly QuotaCount[];
}

/** Admin → every limiter: `{ key, quota? }` as for the stats operation. */
export interface KeyStatsQuery {
  readonly key: string;
  readonly quota?: string;
}

/** One replica's answer to a KeyStatsQuery or a reset. */
export interface ReplicaAnswer<T> {
  readonly replica: string;
  /** `cluster`: every replica reads the same Redis state, so answers are not summed. */
  readonly scope?: Scope;
  readonly value?: T;
  /** Set when this replica refused the query (UNKNOWN_QUOTA, INVALID_REQUEST, UNAVAILABLE). */
  readonly code?: string;
  readonly reason?: string;
}

export type KeyStatsAnswer = ReplicaAnswer<KeyStats>;
export type ResetKeyAnswer = ReplicaAnswer<boolean>;
