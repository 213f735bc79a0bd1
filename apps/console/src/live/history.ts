/**
 * The Live page's memory: per quota, the last 10 minutes of samples (rates and gauges), fed by
 * the admin's stats updates and bounded however long the page stays open.
 */
import { measuredFrom, ratesBetween, UNKNOWN_RATES, type CounterReading } from './rates';
import { RingBuffer } from './ring-buffer';

/** What one stats update says (the fields of the StatsFields fragment this needs). */
export interface StatsUpdateInput {
  /** ISO instant on the admin's clock. */
  readonly at: string;
  readonly replicas: number;
  readonly quotas: readonly {
    readonly quota: string;
    readonly approved: number;
    readonly denied: number;
    readonly activeKeys: number;
    readonly queued: number;
    /** Absent from a test's update that does not ask for it. */
    readonly topRefused?: readonly RefusedKeyInput[];
  }[];
}

/** One of a quota's most refused keys in the admin's latest update. */
export interface RefusedKeyInput {
  readonly key: string;
  readonly count: number;
  readonly error: number;
}

/** One quota at one update; null where unknown or not reported. */
export interface LiveSample {
  readonly atMs: number;
  readonly admitted: number | null;
  readonly refused: number | null;
  readonly keys: number | null;
  readonly waiting: number | null;
}

/** Columns as the charts take them: x in epoch seconds, then one array per series. */
export type Columns = [number[], (number | null)[], (number | null)[]];

export const HISTORY_WINDOW_MS = 10 * 60_000;
/** Updates come about once a second: room for twice that, and never more. */
export const SAMPLES_PER_QUOTA = 1_200;
/** An update this far behind the last one means the admin's clock moved back: start over. */
const CLOCK_MOVED_BACK_MS = 5_000;
/**
 * The admin pushes about once a second: a longer silence (an admin restart, a lost link) is shown
 * as a gap, not as a line drawn across it, and the first rate after it is unknown.
 */
export const SILENCE_GAP_MS = 4_000;
/**
 * Quotas followed at once: memory is bounded (each holds up to SAMPLES_PER_QUOTA samples) however
 * many quotas the limiters report. Quotas first seen beyond it are counted, not charted, until
 * one followed has gone quiet for the whole window.
 */
export const MAX_QUOTAS = 500;

export class QuotaHistory {
  readonly samples = new RingBuffer<LiveSample>(SAMPLES_PER_QUOTA);
  /** The counters of the previous update when it reported this quota, for the next rates. */
  previous: CounterReading | undefined;
  lastReportedMs: number;
  /** When the last sample with decisions (admitted or refused) was taken. */
  lastBusyMs: number | undefined;
  /** The keys refused most in the latest update; empty when it refused none or was not reported. */
  topRefused: readonly RefusedKeyInput[] = [];
  private cached: { rates: Columns; gauges: Columns } | undefined;

  constructor(
    readonly name: string,
    firstSeenMs: number,
  ) {
    this.lastReportedMs = firstSeenMs;
  }

  latest(): LiveSample | undefined {
    return this.samples.newest();
  }

  /** Admitted/s and refused/s; new arrays after each update, the same ones until then. */
  rateColumns(): Columns {
    return this.columns().rates;
  }

  /** Keys and waiting; new arrays after each update, the same ones until then. */
  gaugeColumns(): Columns {
    return this.columns().gauges;
  }

  /** Decisions in the window (the samples held): no admitted or refused request, idle. */
  get idle(): boolean {
    const oldest = this.samples.at(0);
    return this.lastBusyMs === undefined || oldest === undefined || this.lastBusyMs < oldest.atMs;
  }

  add(sample: LiveSample, windowStartMs: number): void {
    if ((sample.admitted ?? 0) > 0 || (sample.refused ?? 0) > 0) this.lastBusyMs = sample.atMs;
    this.samples.push(sample);
    this.samples.dropOldestWhile((s) => s.atMs < windowStartMs);
    this.cached = undefined;
  }

  private columns(): { rates: Columns; gauges: Columns } {
    if (this.cached === undefined) {
      const xs = this.samples.map((s) => s.atMs / 1000);
      this.cached = {
        rates: [xs, this.samples.map((s) => s.admitted), this.samples.map((s) => s.refused)],
        gauges: [xs, this.samples.map((s) => s.keys), this.samples.map((s) => s.waiting)],
      };
    }
    return this.cached;
  }
}

export class LiveHistory {
  private readonly byName = new Map<string, QuotaHistory>();
  private lastAtMs: number | undefined;
  private lastReplicas: number | undefined;
  /** Quotas of the last update not followed, for want of room (MAX_QUOTAS). */
  untracked = 0;

  constructor(
    private readonly windowMs = HISTORY_WINDOW_MS,
    private readonly maxQuotas = MAX_QUOTAS,
  ) {}

  /** Replicas reporting in the last update; undefined before the first. */
  get replicas(): number | undefined {
    return this.lastReplicas;
  }

  /** Quotas with samples in the window, by name. */
  quotas(): QuotaHistory[] {
    return [...this.byName.values()].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  }

  /**
   * Adds one update: a sample for every quota it reports, and an empty one (a gap) for every
   * known quota it does not. Returns false when it ignored the update (not after the last one).
   */
  ingest(update: StatsUpdateInput): boolean {
    const atMs = Date.parse(update.at);
    if (Number.isNaN(atMs)) return false;
    if (this.lastAtMs !== undefined && atMs <= this.lastAtMs) {
      if (this.lastAtMs - atMs < CLOCK_MOVED_BACK_MS) return false;
      this.byName.clear();
    }
    const windowStartMs = atMs - this.windowMs;
    if (this.lastAtMs !== undefined && atMs - this.lastAtMs > SILENCE_GAP_MS) {
      for (const quota of this.byName.values()) {
        quota.previous = undefined;
        const gapAt = this.lastAtMs + 1;
        quota.add({ atMs: gapAt, ...UNKNOWN_RATES, keys: null, waiting: null }, windowStartMs);
      }
    }
    this.lastAtMs = atMs;
    this.lastReplicas = update.replicas;
    const reported = new Set<string>();
    this.untracked = 0;
    for (const stats of update.quotas) {
      reported.add(stats.quota);
      let quota = this.byName.get(stats.quota);
      if (quota === undefined && this.byName.size >= this.maxQuotas) {
        this.untracked += 1;
        continue;
      }
      if (quota === undefined) {
        quota = new QuotaHistory(stats.quota, atMs);
        this.byName.set(stats.quota, quota);
      }
      const reading: CounterReading = {
        atMs,
        replicas: update.replicas,
        approved: stats.approved,
        denied: stats.denied,
      };
      const rates = ratesBetween(quota.previous, reading);
      quota.previous = measuredFrom(quota.previous, reading);
      quota.lastReportedMs = atMs;
      quota.topRefused = stats.topRefused ?? [];
      quota.add({ atMs, ...rates, keys: stats.activeKeys, waiting: stats.queued }, windowStartMs);
    }
    for (const [name, quota] of this.byName) {
      if (reported.has(name)) continue;
      quota.previous = undefined;
      quota.topRefused = [];
      if (quota.lastReportedMs < windowStartMs) {
        this.byName.delete(name); // nothing of it left in the window
        continue;
      }
      quota.add({ atMs, ...UNKNOWN_RATES, keys: null, waiting: null }, windowStartMs);
    }
    return true;
  }
}
