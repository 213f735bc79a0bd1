import { systemClock, type ChangeCursor, type ChangedRows, type Clock } from '@app/engine';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CLOCK, LimiterService } from '../../engine-host/limiter.service';
import { LIMITER_SETTINGS, type LimiterSettings } from '../../settings/limiter-settings';
import { isPersisted } from './persisted-quotas';
import { SERVING_NICE, StoreThread } from './store-thread';
import { encodeSlice } from './stored-rows';
import { UsageRestore } from './usage-restore';
import { UsageStore } from './usage-store';
import type { StoreReply } from './store-thread-body';

/** How often usage is written when it changed: the most admissions a crash can forget. */
export const PERSIST_EVERY_MS = 5000;
/** Changed keys copied per event-loop turn (about a millisecond of copying). */
export const SLICE_ROWS = 2048;
/** Slices handed to the store thread and not yet written; past this a save waits (memory). */
const MAX_IN_FLIGHT = 4;
/** Stored rows the store thread examines for idleness after each save. */
const SWEEP_ROWS = 50_000;
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
  /** Stored keys left out of a restore: numbers, layout, leases or key no limiter writes. */
  rowsUnreadable: number;
  enabled: boolean;
}

/** Keys of one quota (a slice's written rows, or its dropped keys). */
interface KeysOf {
  readonly quota: string;
  readonly keys: readonly string[];
}

/** The keys of a slice's rows, by quota. */
function keysByQuota(rows: ChangedRows): KeysOf[] {
  if (rows.quotas.length === 1) return [{ quota: rows.quotas[0]!.name, keys: rows.keys }];
  const keys = rows.quotas.map((): string[] => []);
  rows.keys.forEach((key, i) => keys[rows.quota[i]!]!.push(key));
  return rows.quotas.map((q, i) => ({ quota: q.name, keys: keys[i]! }));
}

/** The last write at shutdown, for the shutdown line. */
export interface LastWrite {
  readonly outcome: 'written' | 'failed' | 'abandoned' | 'off';
  /** Keys written at shutdown (a save under way at the signal included). */
  readonly rows: number;
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
  private thread: StoreThread | undefined;
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> | undefined;
  /** Set when shutdown gave up on the last write: the save loop stops. */
  private abandoned = false;
  /** Quotas whose keys this process keeps stored, with the engine generation they belong to. */
  private readonly owned = new Map<string, number>();
  /** Quotas whose purge a failed save rolled back: purged again by the next save. */
  private readonly purgeAgain = new Set<string>();
  private lastFailure = '';
  /** Saves started, numbering each save's transaction in the store thread. */
  private saves = 0;
  readonly stats: PersistenceStats = {
    writes: 0,
    failures: 0,
    lastWriteAt: 0,
    lastWriteMs: 0,
    rowsWritten: 0,
    rowsDeleted: 0,
    rowsUnreadable: 0,
    enabled: false,
  };

  private readonly restore: UsageRestore;
  /** Undefined until stop() has finished. */
  lastWrite: LastWrite | undefined;

  constructor(
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
    private readonly limiter: LimiterService,
    @Optional() @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {
    // A quota whose keys were loaded is stored by this process from now on.
    this.restore = new UsageRestore(
      limiter.engine,
      this.log,
      (quota) => {
        if (!this.owned.has(quota)) this.owned.set(quota, limiter.engine.generationOf(quota)!);
      },
      (keys) => (this.stats.rowsUnreadable += keys),
    );
  }

  /**
   * Call after the config is in force, and before any request is served: restore skips quotas
   * that do not exist, and a key that took requests before its stored copy arrives keeps its own.
   */
  async start(): Promise<void> {
    const store = UsageStore.open(this.settings.dataDir, this.log);
    this.store = store;
    this.stats.enabled = store !== undefined;
    if (store === undefined) return;
    // The store thread reads the first slices while the event loop checks the whole file.
    const restoring = this.restore.atStart(
      store,
      this.threadOn(store),
      new Set(this.limiter.quotas().map((q) => q.name)),
      this.clock.now(),
    );
    let problem: string | undefined;
    try {
      problem = store.check();
    } catch (error) {
      problem = String(error);
    }
    if (problem === undefined) {
      await restoring;
      // From now on requests are served: the thread yields a busy core to them.
      void this.thread?.nice(SERVING_NICE);
    } else {
      // Nothing was loaded yet (the check ran first): stop reading, start empty on a new file.
      this.restore.abandon();
      await this.thread?.terminate();
      await restoring;
      this.owned.clear();
      this.store = store.replaceDamaged(problem, this.log);
      this.stats.enabled = this.store !== undefined;
      if (this.store === undefined) return;
    }
    this.timer = setInterval(() => void this.persist(), PERSIST_EVERY_MS);
    this.timer.unref();
  }

  /**
   * A config change may bring back a quota stored before the restart. Its first slice of keys is
   * loaded in this turn, before any request can reach the quota; a larger quota goes on a slice a
   * turn, and a key that takes requests before its stored copy arrives keeps its own count.
   */
  restorePending(): void {
    if (this.store === undefined) return;
    const configured = new Set(this.limiter.quotas().map((q) => q.name));
    this.restore.comeBack(this.store, configured, () => this.clock.now());
  }

  /**
   * Shutdown: the engine host has answered every waiter; write what changed since the last save
   * (waiting for a save under way first) and close. Bounded by FINAL_WRITE_LIMIT_MS.
   */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const store = this.store;
    if (store === undefined) {
      this.lastWrite = { outcome: 'off', rows: 0 };
      return;
    }
    this.restore.abandon(); // a quota still coming back slice by slice stops here
    // No request is served any more: the thread need not yield the CPU to the event loop.
    void this.thread?.nice(0);
    const rowsBefore = this.stats.rowsWritten;
    const failuresBefore = this.stats.failures;
    let outcome: LastWrite['outcome'] = 'written';
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
        outcome = 'abandoned';
        this.log.error(`the last write took over ${FINAL_WRITE_LIMIT_MS} ms: abandoned`);
        await this.thread?.terminate();
      }
    } catch (error) {
      // Shutdown still completes (exit 0): the stored usage is at most one period old.
      outcome = 'failed';
      this.log.error(`last write failed: ${String(error)}`);
    } finally {
      clearTimeout(timer);
      await this.thread?.close();
      this.thread = undefined;
      store.close();
      this.store = undefined;
    }
    if (outcome === 'written' && this.stats.failures > failuresBefore) outcome = 'failed';
    this.lastWrite = { outcome, rows: this.stats.rowsWritten - rowsBefore };
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
    const store = this.store;
    if (store === undefined) return;
    const save = ++this.saves;
    // Started at its first request: a shutdown with nothing to write starts no thread.
    const thread = (): StoreThread => this.threadOn(store);
    const started = performance.now();
    const now = this.clock.now();
    const purged: Promise<StoreReply>[] = [];
    const purgedNames: string[] = [];
    const names = this.persistedNames((quotas) => {
      purgedNames.push(...quotas);
      purged.push(thread().purge(quotas, save));
    });
    const sent = await this.writeChanged(save, names, now, thread);
    if (purged.length + sent.replies.length === 0) {
      if (!final) await this.sweep(thread(), now);
      return;
    }
    const replies = await Promise.all([...purged, ...sent.replies, thread().commit(save)]);
    const failure = replies.find((r) => !r.ok);
    if (failure !== undefined && !failure.ok) {
      // Rolled back as a whole: the keys it held are written again by the next save, and only
      // they (marking every key would make each save after a failure rewrite them all).
      for (const batch of [...sent.written, ...sent.gone]) {
        this.limiter.engine.markChanged(batch.quota, batch.keys);
      }
      for (const name of purgedNames) this.purgeAgain.add(name);
      this.stats.failures++;
      // Once per distinct problem: a full disk would otherwise log every period.
      if (failure.error !== this.lastFailure)
        this.log.error(`cannot write usage: ${failure.error}`);
      this.lastFailure = failure.error;
      return;
    }
    this.lastFailure = '';
    for (const r of replies) {
      if (!r.ok) continue;
      this.stats.rowsWritten += r.written;
      this.stats.rowsDeleted += r.deleted;
    }
    this.stats.writes++;
    this.stats.lastWriteAt = now;
    this.stats.lastWriteMs = performance.now() - started;
    if (!final) await this.sweep(thread(), now);
  }

  /**
   * Collects the changed keys of `names`, one slice per event-loop turn, and hands each slice to
   * the store thread as part of `save`; at most MAX_IN_FLIGHT slices wait there at once. The keys
   * sent and the dropped keys are returned too, so a save that fails can mark them again.
   */
  private async writeChanged(
    save: number,
    names: ReadonlySet<string>,
    now: number,
    thread: () => StoreThread,
  ): Promise<{ replies: Promise<StoreReply>[]; written: KeysOf[]; gone: KeysOf[] }> {
    const engine = this.limiter.engine;
    const replies: Promise<StoreReply>[] = [];
    const written: KeysOf[] = [];
    const gone: KeysOf[] = [];
    const waiting = new Set<Promise<StoreReply>>();
    const send = (reply: Promise<StoreReply>): void => {
      replies.push(reply);
      waiting.add(reply);
      void reply.then(() => waiting.delete(reply));
    };
    let cursor: ChangeCursor | undefined;
    do {
      const { rows, next } = engine.collectChanged((q) => names.has(q), SLICE_ROWS, now, cursor);
      cursor = next;
      for (const quota of rows.overflowed) {
        // More keys were dropped than the engine remembers: store the quota whole again.
        send(thread().purge([quota], save));
        engine.markChanged(quota);
      }
      if (rows.keys.length > 0 || rows.gone.length > 0) {
        written.push(...keysByQuota(rows));
        gone.push(...rows.gone);
        send(thread().write(encodeSlice(rows, now), save));
      }
      while (waiting.size >= MAX_IN_FLIGHT) await Promise.race(waiting);
      if (cursor !== undefined) await nextTurn();
    } while (cursor !== undefined && !this.abandoned);
    return { replies, written, gone };
  }

  /** The store thread, started again if it died (a failure is retried at the next save). */
  private threadOn(store: UsageStore): StoreThread {
    if (this.thread?.alive !== true) {
      this.thread = new StoreThread(store.path);
      if (this.timer !== undefined) void this.thread.nice(SERVING_NICE);
    }
    return this.thread;
  }

  /**
   * The persisted quotas now. A quota that stopped being persisted, or was deleted and defined
   * again, has its stored keys purged; a quota persisted anew has all its keys written.
   */
  private persistedNames(purge: (quotas: string[]) => void): Set<string> {
    const engine = this.limiter.engine;
    const names = new Set(
      this.limiter
        .quotas()
        .filter(isPersisted)
        .map((q) => q.name),
    );
    const gone = [...this.purgeAgain];
    this.purgeAgain.clear();
    for (const [name, generation] of this.owned) {
      if (names.has(name) && engine.generationOf(name) === generation) continue;
      gone.push(name);
      this.owned.delete(name);
    }
    // Sent before any key of this save, so keys written from now on are not purged.
    if (gone.length > 0) purge(gone);
    for (const name of names) {
      const generation = engine.generationOf(name);
      if (this.owned.has(name) || generation === undefined) continue;
      this.owned.set(name, generation);
      // Rows collected while it was persisted before are stored no more: write them all.
      engine.markChanged(name);
    }
    return names;
  }

  /** Deletes idle and orphaned stored keys, a bounded number per save, in the store thread. */
  private async sweep(thread: StoreThread, now: number): Promise<void> {
    const r = await thread.sweep(now, SWEEP_ROWS);
    if (r.ok) {
      this.stats.rowsDeleted += r.deleted;
    } else if (r.error !== this.lastFailure) {
      this.log.error(`cannot delete idle usage: ${r.error}`);
      this.lastFailure = r.error;
    }
  }
}
