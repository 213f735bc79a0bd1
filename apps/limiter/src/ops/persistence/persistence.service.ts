import type { QuotaSpec } from '@app/contracts';
import { systemClock, type Clock, type QuotaSnapshot } from '@app/engine';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { CLOCK, LimiterService } from '../../engine-host/limiter.service';
import { LIMITER_SETTINGS, type LimiterSettings } from '../../settings/limiter-settings';
import { isPersisted, isStale, parseQuotaSnapshot } from './persisted-quotas';
import { SnapshotStore, type StoredQuota } from './snapshot-store';

/** How often usage is written when it changed: the most admissions a crash can forget. */
export const PERSIST_EVERY_MS = 5000;

export interface PersistenceStats {
  writes: number;
  failures: number;
  /** Epoch ms of the last successful write; 0 before the first. */
  lastWriteAt: number;
  enabled: boolean;
}

/**
 * Keeps usage of long windows (a minute or more) and concurrency leases across restarts
 * (issue 3 point 6): restored once the config's quotas exist, written every PERSIST_EVERY_MS when
 * something changed, and once more on shutdown after the waiters were answered. A damaged or
 * unreadable database never stops the limiter: it logs and starts empty.
 */
@Injectable()
export class PersistenceService {
  private readonly log = new Logger('Persistence');
  private store: SnapshotStore | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The JSON last written per quota, so unchanged quotas are not rewritten. */
  private readonly written = new Map<string, string>();
  /** Stored quotas not configured at start: restored if a later config brings them back. */
  private readonly pending = new Map<string, { snapshot: QuotaSnapshot; takenAt: number }>();
  private lastFingerprint = '';
  private lastFailure = '';
  readonly stats: PersistenceStats = { writes: 0, failures: 0, lastWriteAt: 0, enabled: false };

  constructor(
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
    private readonly limiter: LimiterService,
    @Optional() @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {}

  /** Call after the config is in force: restore skips quotas that do not exist. */
  start(): void {
    this.store = SnapshotStore.open(this.settings.dataDir, this.log);
    this.stats.enabled = this.store !== undefined;
    if (this.store === undefined) return;
    this.restore(this.store);
    this.timer = setInterval(() => this.persist(false), PERSIST_EVERY_MS);
    this.timer.unref();
  }

  /** A config change may bring back a quota stored before the restart. */
  restorePending(): void {
    if (this.pending.size === 0) return;
    const configured = new Set(this.limiter.quotas().map((q) => q.name));
    const now = this.clock.now();
    for (const [name, { snapshot, takenAt }] of this.pending) {
      if (!configured.has(name)) continue;
      this.pending.delete(name);
      this.load(snapshot, takenAt, now);
    }
  }

  /** Shutdown: the engine host has answered every waiter; write what is left and close. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    const store = this.store;
    if (store === undefined) return;
    try {
      this.persist(true);
    } catch (error) {
      // Shutdown still completes (exit 0): the stored usage is at most one period old.
      this.log.error(`last write failed: ${String(error)}`);
    } finally {
      store.close();
      this.store = undefined;
    }
  }

  /** Writes the persisted quotas whose state changed since the last write. */
  persist(force: boolean): void {
    const store = this.store;
    if (store === undefined) return;
    const quotas = this.limiter.quotas().filter(isPersisted);
    const fingerprint = this.fingerprintOf(quotas);
    if (!force && fingerprint === this.lastFingerprint) return;
    const now = this.clock.now();
    const names = new Set(quotas.map((q) => q.name));
    const snapshot = this.limiter.engine.snapshot(now, (name) => names.has(name));
    const changed: StoredQuota[] = [];
    const present = new Set<string>();
    for (const q of snapshot.quotas) {
      if (q.keys.length === 0 && q.leases.length === 0) continue;
      present.add(q.name);
      const json = JSON.stringify(q);
      if (this.written.get(q.name) !== json) {
        changed.push({ quota: q.name, takenAt: snapshot.takenAt, snapshot: json });
      }
    }
    for (const [name, p] of this.pending) {
      if (isStale(p.snapshot, p.takenAt, now)) this.pending.delete(name);
    }
    const removed = [...this.written.keys()].filter((n) => !present.has(n) && !this.pending.has(n));
    if (changed.length === 0 && removed.length === 0) {
      this.lastFingerprint = fingerprint;
      return;
    }
    try {
      store.write(changed, removed);
    } catch (error) {
      this.stats.failures++;
      const message = String(error);
      // Once per distinct problem: a full disk would otherwise log every period.
      if (message !== this.lastFailure) this.log.error(`cannot write ${store.path}: ${message}`);
      this.lastFailure = message;
      return;
    }
    for (const q of changed) this.written.set(q.quota, q.snapshot);
    for (const name of removed) this.written.delete(name);
    this.lastFingerprint = fingerprint;
    this.lastFailure = '';
    this.stats.writes++;
    this.stats.lastWriteAt = now;
  }

  private restore(store: SnapshotStore): void {
    let stored: StoredQuota[];
    try {
      stored = store.readAll();
    } catch (error) {
      this.log.error(`cannot read ${store.path} (${String(error)}): starting empty`);
      return;
    }
    const configured = new Set(this.limiter.quotas().map((q) => q.name));
    const now = this.clock.now();
    let keys = 0;
    for (const row of stored) {
      const snapshot = parseQuotaSnapshot(row.snapshot);
      if (snapshot === undefined || snapshot.name !== row.quota) {
        this.log.error(`${store.path}: quota ${row.quota} is unreadable, starting it empty`);
        continue;
      }
      // Rows stay in the database until the next write replaces them.
      this.written.set(row.quota, row.snapshot);
      if (!configured.has(row.quota)) {
        this.pending.set(row.quota, { snapshot, takenAt: row.takenAt });
        continue;
      }
      if (this.load(snapshot, row.takenAt, now)) keys += snapshot.keys.length;
    }
    if (stored.length > 0) {
      this.log.log(`restored ${keys} keys of ${stored.length - this.pending.size} quotas`);
    }
  }

  private load(snapshot: QuotaSnapshot, takenAt: number, now: number): boolean {
    try {
      this.limiter.engine.restore({ version: 2, takenAt, quotas: [snapshot] }, now);
      return true;
    } catch (error) {
      this.log.error(`cannot restore quota ${snapshot.name} (${String(error)}): starting it empty`);
      return false;
    }
  }

  /**
   * Cheap "did anything change": the decision counters and key counts of the persisted quotas,
   * plus the host's revision for releases, usage records and resets, which no counter shows.
   */
  private fingerprintOf(quotas: readonly QuotaSpec[]): string {
    const names = new Set(quotas.map((q) => q.name));
    let text = String(this.limiter.revision);
    for (const c of this.limiter.counters()) {
      if (names.has(c.quota)) text += `|${c.quota}:${c.approved}:${c.denied}:${c.activeKeys}`;
    }
    return text;
  }
}
