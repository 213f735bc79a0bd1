import {
  SnapshotError,
  systemClock,
  type ChangeCursor,
  type ChangedRows,
  type Clock,
  type LimitSpec,
  type StoredLayout,
} from '@app/engine';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CLOCK, LimiterService } from '../../engine-host/limiter.service';
import { LIMITER_SETTINGS, type LimiterSettings } from '../../settings/limiter-settings';
import { isPersisted } from './persisted-quotas';
import { StoreWriter } from './store-writer';
import { decodeStoredKey, encodeSlice, keysByQuota } from './stored-rows';
import { UsageStore, type StoredKey } from './usage-store';

/** How often usage is written when it changed: the most admissions a crash can forget. */
export const PERSIST_EVERY_MS = 5000;
/** Changed keys copied per event-loop turn (about a millisecond of copying). */
export const SLICE_ROWS = 2048;
/** Slices handed to the writer thread and not yet written; past this a save waits (memory). */
const MAX_IN_FLIGHT = 4;
/** Stored rows the writer thread examines for idleness after each save. */
const SWEEP_ROWS = 50_000;
/** Stored keys a quota that comes back reads per event-loop turn. */
const RESTORE_SLICE = 2048;
/** The last write at shutdown is abandoned past this; a crash would lose as much. */
export const FINAL_WRITE_LIMIT_MS = 10_000;

export interface PersistenceStats {
  /** Saves that wrote something, and saves that failed. */
  writes: number;
  failures: number;
  /** Epoch ms of the last successful write; 0 before the first. */
  lastWriteAt: number;
  /** How long the last save took, ms (collection on the event loop and writing in the thread). */
  lastWriteMs: number;
  /** Keys written and stored keys deleted, since start. */
  rowsWritten: number;
  rowsDeleted: number;
  enabled: boolean;
}

/**
 * Keeps usage of long windows (a minute or more) and concurrency leases across restarts
 * (issue 3 point 6), one SQLite row per (quota, key). Every PERSIST_EVERY_MS the keys written
 * since the last save are collected from the engine in slices of SLICE_ROWS, one slice per
 * event-loop turn, and written by a worker thread that owns the writes; nothing keeps a copy of
 * the keys. Restored once the config's quotas exist; written once more on shutdown after the
 * waiters were answered. A damaged or unreadable database never stops the limiter: it logs and
 * starts empty.
 */
@Injectable()
export class PersistenceService {
  private readonly log = new Logger('Persistence');
  private store: UsageStore | undefined;
  private writer: StoreWriter | undefined;
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> | undefined;
  /** Set when shutdown gave up on the last write: the save loop stops. */
  private abandoned = false;
  /** Quotas whose keys this process keeps stored, with the engine generation they belong to. */
  private readonly owned = new Map<string, number>();
  /** Stored quotas not configured at start: restored if a later config brings them back. */
  private readonly pending = new Set<string>();
  /** Stored layouts by id, kept while quotas are pending (null: unreadable). */
  private layouts = new Map<number, StoredLayout | null>();
  private lastFailure = '';
  /** One stored key's numbers while it is loaded (the engine copies them). */
  private scratch = new Float64Array(0);
  readonly stats: PersistenceStats = {
    writes: 0,
    failures: 0,
    lastWriteAt: 0,
    lastWriteMs: 0,
    rowsWritten: 0,
    rowsDeleted: 0,
    enabled: false,
  };

  constructor(
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
    private readonly limiter: LimiterService,
    @Optional() @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {}

  /** Call after the config is in force: restore skips quotas that do not exist. */
  start(): void {
    this.store = UsageStore.open(this.settings.dataDir, this.log);
    this.stats.enabled = this.store !== undefined;
    if (this.store === undefined) return;
    this.restore(this.store);
    this.timer = setInterval(() => void this.persist(), PERSIST_EVERY_MS);
    this.timer.unref();
  }

  /** A config change may bring back a quota stored before the restart. */
  restorePending(): void {
    if (this.pending.size === 0 || this.store === undefined) return;
    const configured = new Set(this.limiter.quotas().map((q) => q.name));
    for (const name of this.pending) {
      if (!configured.has(name)) continue;
      this.pending.delete(name);
      this.restoreQuota(name, '');
    }
  }

  /**
   * Shutdown: the engine host has answered every waiter; write what changed since the last save
   * (waiting for a save under way first) and close. Bounded by FINAL_WRITE_LIMIT_MS.
   */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const store = this.store;
    if (store === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), FINAL_WRITE_LIMIT_MS);
    });
    try {
      const last = (async () => {
        await this.saving;
        await this.persist(true);
      })();
      if ((await Promise.race([last, limit])) === 'late') {
        this.abandoned = true;
        this.log.error(`the last write took over ${FINAL_WRITE_LIMIT_MS} ms: abandoned`);
        await this.writer?.terminate();
      }
    } catch (error) {
      // Shutdown still completes (exit 0): the stored usage is at most one period old.
      this.log.error(`last write failed: ${String(error)}`);
    } finally {
      clearTimeout(timer);
      await this.writer?.close();
      this.writer = undefined;
      store.close();
      this.store = undefined;
    }
  }

  /**
   * Writes what changed since the last save, then (unless `final`) deletes a slice of idle stored
   * keys; a save under way is joined, not doubled.
   */
  persist(final = false): Promise<void> {
    this.saving ??= this.save(final).finally(() => {
      this.saving = undefined;
    });
    return this.saving;
  }

  private async save(final: boolean): Promise<void> {
    const writer = this.writerOrNew();
    if (writer === undefined) return;
    const started = performance.now();
    const now = this.clock.now();
    const names = this.persistedNames(writer);
    const engine = this.limiter.engine;
    const owed = new Set<Promise<void>>();
    let failure: string | undefined;
    let wrote = false;
    let written = 0;
    let deleted = 0;
    const settle = (reply: Promise<{ ok: boolean; error?: string }>, rows?: ChangedRows): void => {
      const done = reply.then((r) => {
        owed.delete(done);
        if (r.ok) return;
        failure ??= r.error;
        // Written by a later save instead: nothing is lost while the process lives.
        if (rows !== undefined) this.markAgain(rows);
      });
      owed.add(done);
    };
    let cursor: ChangeCursor | undefined;
    do {
      const { rows, next } = engine.collectChanged((q) => names.has(q), SLICE_ROWS, now, cursor);
      cursor = next;
      for (const quota of rows.overflowed) {
        // More keys were dropped than the engine remembers: store the quota whole again.
        settle(writer.purge([quota]));
        engine.markChanged(quota);
      }
      if (rows.keys.length > 0 || rows.gone.length > 0) {
        wrote = true;
        const slice = writer.write(encodeSlice(rows, now));
        settle(
          slice.then((r) => {
            if (r.ok) {
              written += r.written;
              deleted += r.deleted;
            }
            return r;
          }),
          rows,
        );
      }
      while (owed.size >= MAX_IN_FLIGHT) await Promise.race(owed);
      if (cursor !== undefined) await nextTurn();
    } while (cursor !== undefined && !this.abandoned);
    await Promise.all(owed);
    this.stats.rowsWritten += written;
    this.stats.rowsDeleted += deleted;
    if (failure !== undefined) {
      this.stats.failures++;
      // Once per distinct problem: a full disk would otherwise log every period.
      if (failure !== this.lastFailure) this.log.error(`cannot write usage: ${failure}`);
      this.lastFailure = failure;
      return;
    }
    this.lastFailure = '';
    if (wrote) {
      this.stats.writes++;
      this.stats.lastWriteAt = now;
      this.stats.lastWriteMs = performance.now() - started;
    }
    if (!final) await this.sweep(writer, now);
  }

  /** The writer thread, started again if it died (a failure is retried at the next save). */
  private writerOrNew(): StoreWriter | undefined {
    const store = this.store;
    if (store === undefined) return undefined;
    if (this.writer?.alive !== true) this.writer = new StoreWriter(store.path);
    return this.writer;
  }

  /**
   * The persisted quotas now. A quota that stopped being persisted, or was deleted and defined
   * again, has its stored keys purged; a quota persisted anew has all its keys written.
   */
  private persistedNames(writer: StoreWriter): Set<string> {
    const engine = this.limiter.engine;
    const names = new Set(
      this.limiter
        .quotas()
        .filter(isPersisted)
        .map((q) => q.name),
    );
    const purge: string[] = [];
    for (const [name, generation] of this.owned) {
      if (names.has(name) && engine.generationOf(name) === generation) continue;
      purge.push(name);
      this.owned.delete(name);
    }
    // Sent before any key of this save, so keys written from now on are not purged.
    if (purge.length > 0) void writer.purge(purge).then((r) => r.ok || this.failedAside(r.error));
    for (const name of names) {
      const generation = engine.generationOf(name);
      if (this.owned.has(name) || generation === undefined) continue;
      this.owned.set(name, generation);
      // Rows collected while it was persisted before are stored no more: write them all.
      engine.markChanged(name);
    }
    return names;
  }

  /** A failed slice: its keys are marked again, its dropped keys remembered again. */
  private markAgain(rows: ChangedRows): void {
    for (const [quota, keys] of keysByQuota(rows)) this.limiter.engine.markChanged(quota, keys);
  }

  /** Deletes idle and orphaned stored keys, a bounded number per save, in the writer thread. */
  private async sweep(writer: StoreWriter, now: number): Promise<void> {
    const r = await writer.sweep(now, SWEEP_ROWS);
    if (r.ok) this.stats.rowsDeleted += r.deleted;
    else this.failedAside(r.error);
  }

  private failedAside(error: string): boolean {
    if (error !== this.lastFailure) this.log.error(`usage database: ${error}`);
    this.lastFailure = error;
    return false;
  }

  /**
   * At start, before any request: every live stored key of a configured quota is loaded, in one
   * pass over the file. Keys of quotas not configured now stay stored (pending).
   */
  private restore(store: UsageStore): void {
    const now = this.clock.now();
    const configured = new Set(this.limiter.quotas().map((q) => q.name));
    const used = new Set<number>();
    let keys = 0;
    try {
      this.layouts = this.compileLayouts(store);
      let after: StoredKey | undefined;
      for (;;) {
        const rows = store.liveKeysAfter(after?.[0] ?? '', after?.[1] ?? '', now, RESTORE_SLICE);
        for (const row of rows) {
          used.add(row[2]);
          if (!configured.has(row[0])) this.pending.add(row[0]);
          else if (this.load(row, now)) keys++;
        }
        after = rows[rows.length - 1];
        if (rows.length < RESTORE_SLICE) break;
      }
      store.dropLayoutsExcept(used);
    } catch (error) {
      this.log.error(`cannot read ${store.path} (${String(error)}): starting empty`);
      return;
    }
    if (this.pending.size === 0) this.layouts.clear();
    if (keys > 0 || this.pending.size > 0) {
      this.log.log(`restored ${keys} keys; stored quotas not configured: ${this.pending.size}`);
    }
  }

  /** A quota that came back: its stored keys, a slice per event-loop turn. */
  private restoreQuota(name: string, after: string): void {
    const store = this.store;
    if (store === undefined) return;
    const now = this.clock.now();
    let rows: StoredKey[];
    try {
      rows = store.liveKeysOf(name, after, now, RESTORE_SLICE);
    } catch (error) {
      this.log.error(`cannot read quota ${name} from ${store.path}: ${String(error)}`);
      return;
    }
    for (const row of rows) this.load(row, now);
    const last = rows[rows.length - 1];
    if (rows.length === RESTORE_SLICE && last !== undefined) {
      setImmediate(() => this.restoreQuota(name, last[1]));
    } else if (this.pending.size === 0) {
      this.layouts.clear();
    }
  }

  /** Loads one stored key; false when its layout or state is unreadable or its quota is gone. */
  private load(row: StoredKey, now: number): boolean {
    const [quota, key, layoutId] = row;
    const layout = this.layouts.get(layoutId);
    if (layout === undefined || layout === null) return false; // orphaned or unreadable
    if (this.scratch.length !== layout.stride) this.scratch = new Float64Array(layout.stride);
    const leases = decodeStoredKey(row, this.scratch);
    if (leases === undefined) return false;
    const engine = this.limiter.engine;
    if (!engine.restoreStoredKey(layout, key, this.scratch, 0, leases, now)) return false;
    if (!this.owned.has(quota)) this.owned.set(quota, engine.generationOf(quota)!);
    return true;
  }

  private compileLayouts(store: UsageStore): Map<number, StoredLayout | null> {
    const layouts = new Map<number, StoredLayout | null>();
    for (const l of store.layouts()) {
      try {
        // Whatever the text holds, storedLayout compiles it as a quota would be (or throws).
        const limits = JSON.parse(l.limits) as readonly LimitSpec[];
        layouts.set(l.id, this.limiter.engine.storedLayout(l.quota, limits, l.stride));
      } catch (error) {
        const why = error instanceof SnapshotError ? error.message : String(error);
        this.log.error(`${store.path}: keys of quota ${l.quota} are unreadable (${why})`);
        layouts.set(l.id, null);
      }
    }
    return layouts;
  }
}
