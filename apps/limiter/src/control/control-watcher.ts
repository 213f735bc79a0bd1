import { changePartIndex, type ControlSet } from '@app/contracts';
import { Events, type KvEntry, type NatsConnection, type QueuedIterator } from 'nats';
import { Pause, within } from './bounded';
import type { ControlEntries } from './control-entries';

/** Opening the bucket and creating the watch's consumer: JetStream API calls. */
const OP_TIMEOUT_MS = 5_000;
/**
 * A replay that delivers no entry for this long is stuck: the watch is opened again. A replay
 * that moves may take longer (thousands of entries, each signature checked, on a busy host).
 */
const SNAPSHOT_TIMEOUT_MS = 15_000;
/** Retries of a failed watch back off from this delay up to the next. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;
/** A bucket the admin has not created yet is looked for this often (a consumer-create request). */
const MISSING_BUCKET_RETRY_MS = 1_000;
/** Entries read in one event-loop turn at most this long (a replay of thousands). */
const TURN_MS = 10;
/** Shutdown waits at most this long for the watch loop to end. */
const STOP_TIMEOUT_MS = 2_000;

export interface ControlWatcherLog {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface ControlWatcherEvents {
  /** The whole control set, once the bucket's replay is complete and after each batch of changes. */
  set(set: ControlSet): void;
  /** True once a watch has replayed the bucket; false when that watch is lost. */
  synced(synced: boolean): void;
}

type Watch = QueuedIterator<KvEntry>;

/** The watch's consumer cannot be created on a stream that does not exist. */
function isMissingBucket(error: unknown): boolean {
  return error instanceof Error && /stream not found/i.test(error.message);
}

/**
 * Follows the admin's JetStream KV bucket on the limiter's NATS connection.
 *
 * - A watch of every key first replays the bucket (the last value of each key); only once that
 *   replay is complete does the set replace the one in force, so a half-read bucket never drops
 *   quotas. After it, changes are applied coalesced: everything that arrived before the next
 *   setImmediate goes in force in one step. A change of many entries (an import) is held until
 *   its commit and goes in force whole (ControlEntries, BucketView): never half of it.
 * - The watch is opened again, on a fresh replay, when its iterator ends (an error, a deleted
 *   bucket), when NATS reconnects (the server may have lost the watch's consumer), and when a
 *   replay stalls (no entry for SNAPSHOT_TIMEOUT_MS).
 * - The bucket is the admin's: a limiter never creates it (it would choose the bucket's options,
 *   replicas and storage, and leave buckets behind in every deployment that has no admin). Until
 *   it exists, the set in force stays (the stored copy, or none) and the bucket is looked for
 *   every MISSING_BUCKET_RETRY_MS; a bucket deleted under a watch is waited for the same way.
 * - Every NATS call is bounded; failures back off up to MAX_RETRY_MS and are logged once a minute.
 */
export class ControlWatcher {
  private nc: NatsConnection | undefined;
  private watch: Watch | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private readonly pause = new Pause();
  private flushing: NodeJS.Immediate | undefined;
  /** The current watch has replayed the bucket: its changes go in force. */
  private replayed = false;
  /** The current watch's replay has been put in force (later flushes only carry changes). */
  private applied = false;

  constructor(
    private readonly bucket: string,
    private readonly entries: ControlEntries,
    private readonly events: ControlWatcherEvents,
    private readonly log: ControlWatcherLog,
  ) {}

  /** Follows `nc` from now on; a fresh connection (after a close) replaces the old one. */
  attach(nc: NatsConnection): void {
    if (this.stopped || this.nc === nc) return;
    this.nc = nc;
    this.restart();
    this.followStatus(nc).catch((error: unknown) =>
      this.log.error(`control watch: NATS status: ${describe(error)}`),
    );
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.restart();
    if (this.flushing !== undefined) clearImmediate(this.flushing);
    this.flushing = undefined;
    if (this.loop !== undefined) {
      await within(this.loop, STOP_TIMEOUT_MS, 'stopping the control watch').catch(() => undefined);
    }
  }

  /** Ends the current watch (the loop opens a new one) and cuts a retry delay short. */
  private restart(): void {
    this.watch?.stop();
    this.pause.wake();
  }

  private async followStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (this.stopped || this.nc !== nc) break;
      if (status.type === Events.Disconnect) {
        this.events.synced(false);
      } else if (status.type === Events.Reconnect) {
        // A restarted server may have lost the watch's consumer: replay the bucket afresh.
        this.restart();
      }
    }
  }

  private async run(): Promise<void> {
    let retryMs = FIRST_RETRY_MS;
    let failures = 0;
    let missing = false;
    while (!this.stopped) {
      const nc = this.nc;
      let waitMs = retryMs;
      if (nc !== undefined && !nc.isClosed()) {
        try {
          if (await this.watchOnce(nc)) {
            retryMs = FIRST_RETRY_MS;
            failures = 0;
            missing = false;
          }
        } catch (error) {
          if (isMissingBucket(error)) {
            if (!missing) {
              this.log.log(
                `control bucket ${this.bucket} does not exist (yet): the set in force stays ` +
                  'until the admin creates it',
              );
            }
            missing = true;
            waitMs = MISSING_BUCKET_RETRY_MS;
          } else if (failures++ % 30 === 0) {
            // Once, then about every minute: a missing JetStream is a state, not a stream of errors.
            this.log.warn(`control bucket ${this.bucket}: ${describe(error)}; retrying`);
          }
        }
        this.replayed = false;
        this.events.synced(false);
      }
      if (this.stopped) break;
      await this.pause.wait(waitMs);
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    }
  }

  /** One watch, until its iterator ends; answers whether it replayed the bucket. */
  private async watchOnce(nc: NatsConnection): Promise<boolean> {
    const js = nc.jetstream({ timeout: OP_TIMEOUT_MS });
    const kv = await within(
      js.views.kv(this.bucket, { bindOnly: true }),
      OP_TIMEOUT_MS * 2,
      'opening the bucket',
    );
    if (this.stopped || this.nc !== nc) return false;
    this.replayed = false;
    this.applied = false;
    this.entries.beginSnapshot();
    const replayed = (): void => {
      if (this.replayed) return;
      this.replayed = true;
      this.schedule();
    };
    // nats.js says "initialized" either in order, after the replay's last entry (the loop has
    // read it), or at once from watch() when every entry was received, though none was read:
    // then only an empty bucket is replayed; otherwise the last entry will say it (delta 0).
    let opened = false;
    let initializedEarly = false;
    const initialized = (): void => {
      if (opened) replayed();
      else initializedEarly = true;
    };
    const watch = await within(
      kv.watch({ key: '>', initializedFn: initialized }),
      OP_TIMEOUT_MS * 2,
      'watching the bucket',
      (late) => late.stop(),
    );
    opened = true;
    if (this.stopped || this.nc !== nc) {
      watch.stop();
      return false;
    }
    if (initializedEarly && watch.getReceived() === 0) replayed();
    this.watch = watch;
    let deadline: NodeJS.Timeout | undefined;
    const awaitEntry = (): void => {
      clearTimeout(deadline);
      deadline = setTimeout(() => {
        if (this.replayed) return;
        this.log.warn(
          `control bucket ${this.bucket}: replay stalled, no entry for ${SNAPSHOT_TIMEOUT_MS} ms; watching again`,
        );
        watch.stop();
      }, SNAPSHOT_TIMEOUT_MS);
    };
    awaitEntry();
    try {
      let turnStarted = performance.now();
      for await (const entry of watch) {
        if (!this.replayed) awaitEntry();
        this.take(entry);
        // The replay's last entry says so itself (nothing pending behind it).
        if (entry.delta === 0) replayed();
        if (this.replayed) this.schedule();
        // A change part is read whole on arrival (hundreds of entries): one per event-loop turn,
        // and the replay (every entry read and its signature checked) in turns of TURN_MS, so
        // requests are served in between. Live changes are not cut: what arrived together is
        // put in force together.
        if (
          changePartIndex(entry.key) !== undefined ||
          (!this.replayed && performance.now() - turnStarted > TURN_MS)
        ) {
          await nextTurn();
          turnStarted = performance.now();
        }
      }
    } finally {
      clearTimeout(deadline);
      if (this.watch === watch) this.watch = undefined;
    }
    return this.replayed;
  }

  private take(entry: KvEntry): void {
    switch (entry.operation) {
      case 'PUT': {
        const problem = this.entries.put(entry.key, entry.string());
        if (problem !== undefined) {
          this.log.error(`control entry skipped (revision ${entry.revision}): ${problem}`);
        }
        break;
      }
      case 'DEL':
      case 'PURGE':
        this.entries.remove(entry.key, entry.string());
        break;
    }
  }

  /**
   * Applies once the entries that arrived together were all read: setImmediate runs after the
   * iterator has handed over everything already queued (that happens in microtasks).
   */
  private schedule(): void {
    if (this.flushing !== undefined || this.stopped) return;
    this.flushing = setImmediate(() => {
      this.flushing = undefined;
      try {
        this.flush();
      } catch (error) {
        // Never crash the limiter over a control change: the set in force stays.
        this.log.error(`control set not applied: ${describe(error)}`);
      }
    });
  }

  private flush(): void {
    if (!this.replayed || this.stopped) return;
    const dropped = this.entries.endSnapshot();
    if (dropped.length > 0) {
      this.log.log(`control entries deleted while not watching: ${dropped.join(', ')}`);
    }
    // Entries equal to those in force (an admin settling a change) and change parts held
    // until their commit change nothing: no set to compose.
    if (this.entries.takeChanged() || !this.applied) this.events.set(this.entries.toSet());
    this.applied = true;
    this.events.synced(true);
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
