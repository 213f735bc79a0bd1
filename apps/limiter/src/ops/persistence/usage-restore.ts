import { normaliseKey } from '@app/contracts';
import {
  SnapshotError,
  type Engine,
  type StoredLayout,
  type StoredLease,
  type StoredLimitSpec,
} from '@app/engine';
import type { StoreThread } from './store-thread';
import { parseLeases } from './stored-rows';
import type { ReadSlice } from './stored-slice';
import type { UsageStore } from './usage-store';
import type { StoreReply } from './store-thread-body';

/** Stored keys loaded per slice (one event-loop turn each). */
const RESTORE_SLICE = 2048;
/** Slices the store thread reads ahead while the event loop loads one. */
const READS_IN_FLIGHT = 3;

interface RestoreLog {
  log(message: string): void;
  error(message: string): void;
}

/** Stored keys of one quota left out, and why the first of them was. */
interface Unreadable {
  keys: number;
  first?: string;
}

/**
 * What the engine cannot check of a stored key: its layout, its count of numbers, its leases, and
 * the key itself (one the contract let in, as it was normalised).
 */
function storedKeyProblem(
  layout: StoredLayout | null,
  stride: number,
  leases: readonly StoredLease[] | undefined,
  key: unknown,
): string | undefined {
  if (layout === null) return 'layout: unreadable';
  if (layout.stride !== stride) return `state: not ${layout.stride} numbers`;
  if (leases === undefined) return 'leases: must be a list of { id, requestId, expiresAt }';
  if (typeof key !== 'string') return 'key: must be a string';
  const checked = normaliseKey(key);
  if (!checked.ok) return checked.reason;
  return checked.value === key ? undefined : 'key: must be normalised (NFC)';
}

/**
 * Loads stored usage into the engine: every configured quota's keys at start (read by the store
 * thread while the event loop loads), and later the keys of a quota the config at start lacked,
 * when a config brings it back. `loaded` is told of each quota whose keys were loaded.
 */
export class UsageRestore {
  /** Stored quotas not configured at start: restored if a later config brings them back. */
  private readonly pending = new Set<string>();
  /** Stored layouts by id, kept while quotas are pending (null: unreadable). */
  private layouts = new Map<number, StoredLayout | null>();
  private reads = 0;
  private abandoned = false;

  constructor(
    private readonly engine: Engine,
    private readonly log: RestoreLog,
    private readonly loaded: (quota: string) => void,
    /** Told how many stored keys of a quota were left out as unreadable. */
    private readonly leftOut: (keys: number) => void = () => undefined,
  ) {}

  /** Start: the keys of `configured` quotas, slice by slice; the others wait (pending). */
  async atStart(
    store: UsageStore,
    thread: StoreThread,
    configured: ReadonlySet<string>,
    now: number,
  ): Promise<void> {
    const restored = new Set<string>();
    const used = new Set<number>();
    let keys = 0;
    try {
      this.layouts = this.compileLayouts(store);
      for (const quota of store.storedQuotas()) {
        if (configured.has(quota)) restored.add(quota);
        else this.pending.add(quota);
      }
      for (const quota of restored) keys += await this.readBack(thread, quota, now, used);
      if (!this.abandoned) store.dropLayoutsExcept(restored, used);
    } catch (error) {
      if (!this.abandoned) {
        this.log.error(`cannot read ${store.path} (${String(error)}): the rest starts empty`);
      }
    }
    if (this.pending.size === 0) this.layouts.clear();
    if (keys > 0 || this.pending.size > 0) {
      this.log.log(`restored ${keys} keys; stored quotas not configured: ${this.pending.size}`);
    }
  }

  /** The file turned out damaged: nothing more is loaded, nothing is pending. */
  abandon(): void {
    this.abandoned = true;
    this.pending.clear();
    this.layouts.clear();
  }

  /**
   * Quotas of `configured` that were pending: their first slice of keys is loaded in this turn,
   * before any request can reach them; a larger quota goes on a slice a turn, and a key that takes
   * requests before its stored copy arrives keeps its own count.
   */
  comeBack(store: UsageStore, configured: ReadonlySet<string>, now: () => number): void {
    for (const name of this.pending) {
      if (!configured.has(name)) continue;
      this.pending.delete(name);
      this.readSlices(store, name, '', now, { keys: 0 });
    }
  }

  /** Slices of one quota from the event loop's connection, one per turn. */
  private readSlices(
    store: UsageStore,
    name: string,
    after: string,
    now: () => number,
    unreadable: Unreadable,
  ): void {
    if (this.abandoned) return;
    let read: { slice: ReadSlice; last: string | undefined };
    try {
      read = store.readSlice(name, after, now(), RESTORE_SLICE);
    } catch (error) {
      // Closed at shutdown, or unreadable: the rest of the quota starts empty.
      this.log.error(`cannot read quota ${name} from ${store.path}: ${String(error)}`);
      return;
    }
    this.loadSlice(name, read.slice, now(), undefined, unreadable);
    const last = read.last;
    if (last !== undefined) {
      setImmediate(() => this.readSlices(store, name, last, now, unreadable));
      return;
    }
    this.reportUnreadable(name, unreadable);
    if (this.pending.size === 0) this.layouts.clear();
  }

  /**
   * A quota's live stored keys, read by the store thread: the next slices are read there while
   * this one is loaded here, a few on their way at once. Returns the keys loaded.
   */
  private async readBack(
    thread: StoreThread,
    quota: string,
    now: number,
    used: Set<number>,
  ): Promise<number> {
    const read = ++this.reads;
    const ask = (): Promise<StoreReply> => thread.read(read, quota, now, RESTORE_SLICE);
    const asked = Array.from({ length: READS_IN_FLIGHT }, ask);
    let keys = 0;
    const unreadable: Unreadable = { keys: 0 };
    try {
      for (;;) {
        const reply = await asked.shift()!;
        if (!reply.ok) throw new Error(reply.error);
        if (this.abandoned) return keys;
        keys += this.loadSlice(quota, reply.slice!, now, used, unreadable);
        if (reply.slice!.done) break;
        asked.push(ask());
      }
    } finally {
      await Promise.all(asked); // answered empty once the read is over
    }
    this.reportUnreadable(quota, unreadable);
    return keys;
  }

  /** Loads one slice of stored keys; returns how many were loaded (the rest is counted). */
  private loadSlice(
    quota: string,
    slice: ReadSlice,
    now: number,
    used: Set<number> | undefined,
    unreadable: Unreadable,
  ): number {
    const keys = JSON.parse(slice.keys) as string[];
    const leases = JSON.parse(slice.leases) as (string | null)[];
    let loaded = 0;
    let offset = 0;
    for (let i = 0; i < keys.length; i++) {
      const id = slice.layouts[i]!;
      const stride = slice.strides[i]!;
      const at = offset;
      offset += Math.max(0, stride);
      used?.add(id);
      const layout = this.layouts.get(id);
      // A layout newer than the start holds keys this process wrote itself: the engine has them.
      if (layout === undefined) continue;
      const held = leases[i] ?? null;
      const leased = held === null ? [] : parseLeases(held);
      const problem = storedKeyProblem(layout, stride, leased, keys[i]);
      if (problem !== undefined || layout === null || leased === undefined) {
        unreadable.keys++;
        unreadable.first ??= problem;
        continue;
      }
      const restored = this.engine.restoreStoredKey(layout, keys[i]!, slice.state, at, leased, now);
      if (typeof restored === 'object') {
        unreadable.keys++;
        unreadable.first ??= restored.unreadable;
      } else if (restored !== 'unknown-quota') {
        loaded++;
      }
    }
    if (loaded > 0) this.loaded(quota);
    return loaded;
  }

  private reportUnreadable(quota: string, unreadable: Unreadable): void {
    if (unreadable.keys === 0) return;
    this.leftOut(unreadable.keys);
    const why = unreadable.first === undefined ? '' : ` (the first: ${unreadable.first})`;
    this.log.error(
      `${unreadable.keys} stored keys of quota ${quota} are unreadable: left out${why}`,
    );
  }

  private compileLayouts(store: UsageStore): Map<number, StoredLayout | null> {
    const layouts = new Map<number, StoredLayout | null>();
    for (const l of store.layouts()) {
      try {
        // Whatever the text holds, storedLayout compiles it as a quota would be (or throws).
        const limits = JSON.parse(l.limits) as readonly StoredLimitSpec[];
        layouts.set(l.id, this.engine.storedLayout(l.quota, limits, l.stride));
      } catch (error) {
        const why = error instanceof SnapshotError ? error.message : String(error);
        this.log.error(`${store.path}: keys of quota ${l.quota} are unreadable (${why})`);
        layouts.set(l.id, null);
      }
    }
    return layouts;
  }
}
