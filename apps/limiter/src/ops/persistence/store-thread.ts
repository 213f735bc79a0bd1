import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { sliceOf } from './stored-slice';
import { STORE_SQL } from './usage-store';
import {
  runStoreThread,
  type WriteRequest,
  type StoreThreadData,
  type StoreReply,
  type StoreRequest,
} from './store-thread-body';

/** As the event loop's connection: a replica shutting down beside us waits, it does not fail. */
const BUSY_TIMEOUT_MS = 5000;
const SWEEP_STEP = 2000;
/** 16 MiB: the B-tree pages of about 200 000 keys. */
const CACHE_KIB = 16_384;
/** Changed keys a save sorts before writing them: at most ~8 MB held, most of the locality won. */
const SORT_ROWS = 65_536;
/**
 * While requests are served: below the event loop's priority (0), so a save yields a busy core to
 * requests. A restore (before any request) and the last write (after the last) run at 0.
 */
export const SERVING_NICE = 10;

/**
 * The store thread is started from its source text, so it runs the same whether the limiter
 * runs from its TypeScript sources or as one bundle (which has no separate worker file).
 */
const THREAD_SOURCE = `const { parentPort, workerData } = require('node:worker_threads');
// On Linux a nice value is per thread: the event loop's thread wins a busy core over this one.
const renice = (nice) => {
  if (process.platform === 'linux') require('node:os').setPriority(nice);
};
const Database = require('node:module').createRequire(workerData.requireFrom)('better-sqlite3');
(${runStoreThread.toString()})(parentPort, workerData, Database, ${sliceOf.toString()}, renice);`;

export type WriteOutcome = StoreReply;

/**
 * The event loop's side of the store thread: requests go out in order, each answered once.
 * While an answer is owed the thread keeps the process alive (a shutdown awaits its last write);
 * otherwise it does not. A thread that dies answers everything owed with a failure.
 */
export class StoreThread {
  private readonly worker: Worker;
  private readonly owed = new Map<number, (reply: StoreReply) => void>();
  private nextId = 1;
  private deadReason: string | undefined;

  constructor(path: string) {
    const data: StoreThreadData = {
      path,
      sql: STORE_SQL,
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      sweepStep: SWEEP_STEP,
      cacheKiB: CACHE_KIB,
      sortRows: SORT_ROWS,
      requireFrom: join(__dirname, 'store-thread'),
    };
    // execArgv: none of the parent's preloads (a TypeScript loader would only slow its start).
    this.worker = new Worker(THREAD_SOURCE, { eval: true, workerData: data, execArgv: [] });
    this.worker.unref();
    this.worker.on('message', (reply: StoreReply) => {
      const answer = this.owed.get(reply.id);
      this.owed.delete(reply.id);
      if (this.owed.size === 0) this.worker.unref();
      answer?.(reply);
    });
    this.worker.on('error', (error) => this.die(String(error)));
    this.worker.on('exit', (code) => this.die(`the store thread exited (${code})`));
  }

  /** False once the thread died or was closed: a new thread is needed. */
  get alive(): boolean {
    return this.deadReason === undefined;
  }

  /** Requests sent and not answered yet. */
  get inFlight(): number {
    return this.owed.size;
  }

  /** Writes one slice of save `save`; its arrays are moved to the thread (unusable here after). */
  write(batch: WriteRequest, save: number): Promise<StoreReply> {
    const moved = [batch.state.buffer, batch.idleAt.buffer, batch.quota.buffer];
    // Our own typed arrays, never shared memory.
    return this.send({ ...batch, save }, moved as ArrayBuffer[]);
  }

  purge(quotas: readonly string[], save: number): Promise<StoreReply> {
    return this.send({ kind: 'purge', save, quotas });
  }

  /** Ends save `save`: its writes and purges take effect together, or not at all. */
  commit(save: number): Promise<StoreReply> {
    return this.send({ kind: 'commit', save });
  }

  /** The next slice of read `read` of `quota`'s stored keys (see StoreRequest 'read'). */
  read(read: number, quota: string, now: number, limit: number): Promise<StoreReply> {
    return this.send({ kind: 'read', read, quota, now, limit });
  }

  sweep(now: number, maxRows: number): Promise<StoreReply> {
    return this.send({ kind: 'sweep', now, maxRows });
  }

  /**
   * The thread's nice value from now on (Linux; elsewhere a nice value is per process and nothing
   * is changed). Raising it always works; lowering it back needs the permission (root or
   * RLIMIT_NICE), else the thread keeps its value.
   */
  nice(nice: number): Promise<StoreReply> {
    return this.send({ kind: 'nice', nice });
  }

  /** Waits for everything sent before, then closes the database and ends the thread. */
  async close(): Promise<void> {
    if (!this.alive) return;
    await this.send({ kind: 'close' });
    this.deadReason = 'closed';
  }

  /** Ends the thread now: a transaction under way is rolled back (SQLite keeps the last one). */
  async terminate(): Promise<void> {
    this.die('terminated');
    await this.worker.terminate();
  }

  private send(request: StoreRequest, transfer: ArrayBuffer[] = []): Promise<StoreReply> {
    const id = this.nextId++;
    if (this.deadReason !== undefined) {
      return Promise.resolve({ id, ok: false, error: this.deadReason });
    }
    return new Promise((resolve) => {
      this.owed.set(id, resolve);
      this.worker.ref();
      this.worker.postMessage({ ...request, id }, transfer);
    });
  }

  private die(reason: string): void {
    this.deadReason ??= reason;
    for (const [id, answer] of this.owed) answer({ id, ok: false, error: reason });
    this.owed.clear();
    this.worker.unref();
  }
}
