import {
  controlNames,
  ControlSequence,
  encodeEntry,
  providerEntryKey,
  quotaEntryKey,
  type ChangeOp,
  type ControlEntry,
  type ControlProvider,
  type ControlQuota,
  type ControlSet,
  type RememberingOpener,
  type SigningKey,
} from '@app/contracts';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { ThrottledLog } from '@app/logging';
import type { NatsConnection } from 'nats';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import { openControlBucket } from './bucket-bounds';
import {
  finishChange,
  FOREIGN_SHOWN,
  readBucket,
  writeChange,
  type BucketRead,
  type Foreign,
} from './bucket-change';
import { BucketGuard } from './bucket-guard';
import { controlOpener, type ControlBucket } from './bucket-writes';
import { errorMessage } from './error-message';
import { NatsConnectionService } from './nats-connection.service';

/** JetStream API calls (bucket lookup, put, get, delete) give up after this long. */
const JETSTREAM_TIMEOUT_MS = 2_000;
/** KV writes in flight at once during an import or a reconcile. */
const PUBLISH_WINDOW = 64;
/** A change part's largest value, and at most half the server's max_payload. */
const PART_MAX_BYTES = 64 * 1024;
/** NATS's default max_payload, when the server has not said. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
/** Reading the bucket gives up when no entry arrives for this long. */
const READ_IDLE_MS = 5_000;
/** After a failed write or reconcile while NATS is up, reconcile again this often until in sync. */
const RETRY_RECONCILE_MS = 2_000;
/** Foreign writes that arrive together are restored by one reconcile this long after the first. */
const RESTORE_DELAY_MS = 200;
/**
 * Restores (and their audit entries) start at most this often: a client that keeps writing the
 * bucket gets its writes undone once a second, not a reconcile and an audit row per write.
 */
const RESTORE_EVERY_MS = 1_000;
/** Shutdown waits at most this long for queued writes. */
const SHUTDOWN_WAIT_MS = 5_000;

/** A client that may write the bucket can cause these at will. */
const foreignLog = new ThrottledLog('ControlPublisher', 'control.foreign-write', 'warn');

/**
 * What a write did. `published: false` means "stored (by the caller), not yet published": NATS is
 * down or JetStream refused; the next reconcile (on reconnect, or the retry while NATS is up)
 * publishes it. Never an exception: a mutation must not fail because NATS is away.
 */
export type PublishOutcome =
  { readonly published: true } | { readonly published: false; readonly reason: string };

/** A reconcile's outcome; `put` / `deleted` count the entries it changed (puts, deletes). */
export type ReconcileOutcome =
  | { readonly published: true; readonly put: number; readonly deleted: number }
  | { readonly published: false; readonly reason: string };

/** The bucket on one connection, and the size of change parts that connection's server takes. */
interface OpenBucket {
  readonly nc: NatsConnection;
  readonly control: ControlBucket;
  readonly partBytes: number;
}

/**
 * Foreign writes found in the bucket and the reconcile that put the admin's state back (with
 * CONTROL_SEED): written to the audit log by the caller of `onRestored`.
 */
export interface Restored {
  /** The first FOREIGN_SHOWN found, and how many in all. */
  readonly found: readonly Foreign[];
  readonly foundCount: number;
  readonly put: number;
  readonly deleted: number;
}

/** Where reconcile reads the admin's whole state (the SQLite store owns it). */
export type ControlSetSource = () => Promise<ControlSet>;

/**
 * Publishes the admin's quotas and provider profiles to the JetStream KV bucket the limiters
 * watch (`controlNames(prefix).bucket`, one entry per quota / provider, history 1). A write of
 * one entry is one KV put or delete; several (an import, a reconcile) are one change the
 * limiters apply whole (writeChange: parts, a commit, then the settle).
 *
 * Every KV operation, single writes and reconciles alike, runs through one FIFO queue, so writes
 * land in the order they were asked for (a put then a delete of the same key ends deleted) and a
 * reconcile never interleaves with a write.
 *
 * The bucket is made to match the admin's state (`reconcile`) on every connect and reconnect (a
 * NATS restarted without its JetStream store comes back with no bucket: it is created again and
 * refilled) and, while NATS is up, every RETRY_RECONCILE_MS after a write failed. The state comes
 * from the function given to `setSource`.
 */
@Injectable()
export class ControlPublisher implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ControlPublisher');
  private readonly name: string;
  private source: ControlSetSource | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private bucket: OpenBucket | undefined;
  /** The bucket holds no trace of an unfinished change (known since it was last read). */
  private clean = false;
  /** Something the caller stored is not (known to be) in the bucket: reconcile is owed. */
  private behind = false;
  /** Logged once per outage of JetStream writes, not once per write. */
  private failing = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private removeUpListener: (() => void) | undefined;
  /** Writes and reconciles queued or running. */
  private queued = 0;
  private readonly seed: SigningKey | undefined;
  /** Every write's sequence, for the life of the process (raised past the bucket's). */
  private readonly sequence = new ControlSequence();
  /** Checks each value in the bucket once for the life of the process (see controlOpener). */
  private readonly opener: RememberingOpener;
  private readonly guard: BucketGuard;
  /** Foreign writes the guard reported, not yet restored. */
  private found: Foreign[] = [];
  private foundCount = 0;
  private restoreTimer: NodeJS.Timeout | undefined;
  private lastRestoreAt = -Infinity;
  private readonly restoredListeners: ((restored: Restored) => void)[] = [];
  /** For the shutdown line: queued when shutdown began, and still unfinished when it stopped waiting. */
  drained: { readonly queued: number; readonly left: number } | undefined;

  constructor(
    @Inject(ADMIN_SETTINGS) settings: AdminSettings,
    private readonly nats: NatsConnectionService,
  ) {
    this.name = controlNames(settings.subjectPrefix).bucket;
    this.seed = settings.signing.controlSeed;
    this.opener = controlOpener(this.name, this.seed);
    this.guard = new BucketGuard(
      (foreign) => this.foreignFound(foreign),
      (why) => this.fellBehind(`control bucket watch: ${why}`),
    );
  }

  /** Called after every reconcile that put the admin's state back over foreign writes. */
  onRestored(listener: (restored: Restored) => void): void {
    this.restoredListeners.push(listener);
  }

  /** The KV bucket's name. */
  get bucketName(): string {
    return this.name;
  }

  /** True while something stored is not yet published (NATS down, or a write failed). */
  get pending(): boolean {
    return this.behind;
  }

  onModuleInit(): void {
    this.removeUpListener = this.nats.onUp(() => {
      // The bucket may be gone with a restarted server: look it up (or create it) again.
      this.bucket = undefined;
      void this.reconcileFromSource();
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.restoreTimer);
    this.guard.stop();
    this.removeUpListener?.();
    const queued = this.queued;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)));
    await Promise.race([this.tail, late]).finally(() => clearTimeout(timer));
    this.drained = { queued, left: this.queued };
  }

  /**
   * Where reconcile reads the admin's state. Setting it reconciles at once when NATS is up (and
   * on every connect and reconnect from then on).
   */
  setSource(source: ControlSetSource): void {
    this.source = source;
    if (this.nats.isUp) void this.reconcileFromSource();
  }

  publishQuota(quota: ControlQuota): Promise<PublishOutcome> {
    return this.write([entryOp({ kind: 'quota', quota })]);
  }

  /**
   * Many entries (an import): one change, which the limiters apply whole. Resolves once it is in
   * force (committed); its settle runs on in the queue before any later write.
   */
  publishEntries(entries: readonly ControlEntry[]): Promise<PublishOutcome> {
    return this.write(entries.map(entryOp));
  }

  removeQuota(name: string): Promise<PublishOutcome> {
    return this.write([[quotaEntryKey(name), null]]);
  }

  publishProvider(provider: ControlProvider): Promise<PublishOutcome> {
    return this.write([entryOp({ kind: 'provider', provider })]);
  }

  removeProvider(name: string): Promise<PublishOutcome> {
    return this.write([[providerEntryKey(name), null]]);
  }

  /**
   * Makes the bucket hold exactly `set`: finishes what is left of an interrupted change, then
   * puts entries that are missing or differ and deletes keys that are not in it, as one change
   * when there are several. Entries already equal are left alone (no revision, no wake-up).
   */
  reconcile(set: ControlSet): Promise<ReconcileOutcome> {
    return this.enqueue(() => this.reconcileNow(set));
  }

  /** Reconciles with the state the source gives now (in queue order). */
  reconcileFromSource(): Promise<ReconcileOutcome> {
    return this.enqueue(async () => {
      const source = this.source;
      if (source === undefined) return notPublished('no source of the admin state yet');
      let set: ControlSet;
      try {
        set = await source();
      } catch (error) {
        this.fellBehind(`reading the admin state failed: ${errorMessage(error)}`);
        return notPublished(errorMessage(error));
      }
      return this.reconcileNow(set);
    });
  }

  /** Resolves once every write and reconcile asked for so far has finished. */
  async idle(): Promise<void> {
    await this.tail;
  }

  /**
   * One queued task; the caller hears as soon as the write is in force (a change: committed),
   * the queue moves on once it is settled.
   */
  private write(ops: readonly ChangeOp[]): Promise<PublishOutcome> {
    return new Promise<PublishOutcome>((resolve) => {
      void this.enqueue(async (): Promise<void> => {
        try {
          const bucket = await this.openBucket();
          if (bucket === undefined) {
            this.behind = true;
            resolve(notPublished('NATS is not connected'));
            return;
          }
          // Its parts would overwrite those of a change a dead admin left committed, and its
          // sequence must be above those in the bucket: read the bucket first on a connection.
          if (!this.clean) await this.finishLeftovers(bucket.control);
          await writeChange(bucket.control, ops, {
            window: PUBLISH_WINDOW,
            partBytes: bucket.partBytes,
            committed: () => resolve({ published: true }),
          });
          this.recovered();
        } catch (error) {
          this.fellBehind(`control bucket write failed: ${errorMessage(error)}`);
          resolve(notPublished(errorMessage(error)));
        }
      });
    });
  }

  private async reconcileNow(set: ControlSet): Promise<ReconcileOutcome> {
    try {
      const bucket = await this.openBucket();
      if (bucket === undefined) {
        this.behind = true;
        return notPublished('NATS is not connected');
      }
      const read = await this.finishLeftovers(bucket.control);
      const served = read.view.entries;
      const wanted = new Map<string, string>();
      for (const quota of set.quotas) addEntry(wanted, { kind: 'quota', quota });
      for (const provider of set.providers) addEntry(wanted, { kind: 'provider', provider });

      const puts: ChangeOp[] = [];
      for (const [key, value] of wanted) {
        if (served.get(key)?.raw !== value) puts.push([key, value]);
      }
      // Served or not (a foreign value limiters refuse), a key the admin does not hold goes.
      const deletes = [...new Set([...served.keys(), ...read.stored.keys()])]
        .filter((key) => !wanted.has(key))
        .map((key): ChangeOp => [key, null]);
      await writeChange(bucket.control, [...puts, ...deletes], {
        window: PUBLISH_WINDOW,
        partBytes: bucket.partBytes,
      });
      this.behind = false;
      this.recovered();
      if (puts.length + deletes.length > 0) {
        this.logger.log(`control bucket reconciled: ${puts.length} put, ${deletes.length} deleted`);
      }
      this.guard.follow(bucket.control);
      this.restored(read, puts.length, deletes.length);
      return { published: true, put: puts.length, deleted: deletes.length };
    } catch (error) {
      this.fellBehind(`control bucket reconcile failed: ${errorMessage(error)}`);
      return notPublished(errorMessage(error));
    }
  }

  /**
   * Reads the bucket as the limiters serve it and finishes (or clears) what an interrupted
   * change left there; answers the read, whose entries served are now all under their own keys.
   */
  private async finishLeftovers(bucket: ControlBucket): Promise<BucketRead> {
    const read = await readBucket(bucket.kv, READ_IDLE_MS, bucket.opener);
    this.sequence.raise(read.view.highestSeq);
    const rewritten = await finishChange(bucket, read, PUBLISH_WINDOW);
    if (rewritten > 0) {
      this.logger.log(`finished a change left committed: ${rewritten} entries written`);
    }
    this.clean = true;
    return read;
  }

  /** A foreign write the guard saw: restored with the next reconcile, soon. */
  private foreignFound(foreign: Foreign): void {
    if (this.foundCount++ < FOREIGN_SHOWN) this.found.push(foreign);
    foreignLog.write(() => ({
      msg: `control bucket: a write not signed by CONTROL_SEED (${foreign.reason}): the admin's state goes back`,
      key: foreign.key,
      cause: foreign.refusal,
    }));
    if (this.restoreTimer !== undefined || this.stopping) return;
    const now = performance.now();
    const delay = Math.max(RESTORE_DELAY_MS, this.lastRestoreAt + RESTORE_EVERY_MS - now);
    this.restoreTimer = setTimeout(() => {
      this.restoreTimer = undefined;
      this.lastRestoreAt = performance.now();
      if (!this.stopping) void this.reconcileFromSource();
    }, delay);
    this.restoreTimer.unref();
  }

  /** After a reconcile: tells the listeners what foreign writes it replaced, if any. */
  private restored(read: BucketRead, put: number, deleted: number): void {
    if (this.seed === undefined) return;
    const found = [...this.found];
    for (const foreign of read.foreign) {
      if (found.length >= FOREIGN_SHOWN) break;
      if (!found.some((f) => f.key === foreign.key && f.reason === foreign.reason)) {
        found.push(foreign);
      }
    }
    const foundCount = Math.max(this.foundCount + read.foreignCount, found.length);
    this.found = [];
    this.foundCount = 0;
    if (foundCount === 0) return;
    const restored: Restored = { found, foundCount, put, deleted };
    for (const listener of this.restoredListeners) listener(restored);
  }

  /** The bucket on the current connection, created when missing; undefined while NATS is down. */
  private async openBucket(): Promise<OpenBucket | undefined> {
    const nc = this.nats.connection;
    if (nc === undefined) return undefined;
    if (this.bucket?.nc === nc) return this.bucket;
    this.guard.stop();
    const control = await openControlBucket(nc, this.name, JETSTREAM_TIMEOUT_MS, {
      seed: this.seed,
      sequence: this.sequence,
      opener: this.opener,
      log: this.logger,
    });
    const maxPayload = nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
    this.bucket = { nc, control, partBytes: Math.min(PART_MAX_BYTES, Math.floor(maxPayload / 2)) };
    // Not read on this connection yet: it may hold what a dead admin left of a change.
    this.clean = false;
    return this.bucket;
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.queued++;
    this.tail = run
      .catch(() => undefined)
      .then(() => {
        this.queued--;
      });
    return run;
  }

  /** A write failed while NATS was up: forget the bucket handle and retry with a reconcile. */
  private fellBehind(why: string): void {
    this.behind = true;
    this.bucket = undefined;
    this.guard.stop();
    if (!this.failing) {
      this.failing = true;
      this.logger.warn(`${why}; will reconcile`);
    }
    this.scheduleRetry();
  }

  private recovered(): void {
    if (!this.failing) return;
    this.failing = false;
    if (!this.behind) this.logger.log('control bucket writes work again');
  }

  private scheduleRetry(): void {
    if (this.stopping || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // While NATS is down the reconnect listener reconciles instead.
      if (this.behind && this.nats.isUp && this.source !== undefined && !this.stopping) {
        void this.reconcileFromSource();
      }
    }, RETRY_RECONCILE_MS);
    this.retryTimer.unref();
  }
}

function entryOp(entry: ControlEntry): ChangeOp {
  const { key, value } = encodeEntry(entry);
  return [key, value];
}

function addEntry(into: Map<string, string>, entry: ControlEntry): void {
  const { key, value } = encodeEntry(entry);
  into.set(key, value);
}

function notPublished(reason: string): { readonly published: false; readonly reason: string } {
  return { published: false, reason };
}
