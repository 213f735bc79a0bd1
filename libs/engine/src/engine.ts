import {
  collectChanged,
  markChanged,
  restoreStoredKey,
  StoredLayout,
  type ChangeCursor,
  type ChangedRows,
  type RestoredKey,
  type StoredLease,
} from './changes';
import { fnv1a } from './hash/fnv1a';
import { listHeldKeys, type HeldKey, type KeyListCursor } from './key-listing';
import { costProblem } from './quota/cost';
import { type CompiledQuota, type StoredLimitSpec } from './quota/compile';
import { PreparedQuotas } from './quota/prepared-quotas';
import { QuotaResolver } from './quota/resolver';
import { InvalidQuotaError } from './errors';
import { refusal } from './shard/decision';
import { Shard, type TableState } from './shard/shard';
import type { PendingAcquire } from './shard/waiters';
import { restoreInto, snapshotOf, type EngineSnapshot } from './snapshot';
import type {
  AcquireInput,
  Decision,
  DecisionCode,
  KeyLimitsInput,
  KeyLimitsView,
  KeyStats,
  QuotaSpec,
  ReleaseInput,
  StatsInput,
  UsageInput,
} from './types';

export interface EngineOptions {
  /** Shards the (quota, key) space is split over by FNV-1a; default 25 (SHARDS). */
  readonly shards?: number;
  /** How long a client requestId gets its first answer again; default 60 s. */
  readonly idempotencyTtlMs?: number;
  /** How long release and usage can find an admitted request; default 10 min. */
  readonly receiptTtlMs?: number;
  /** Receipts kept per shard at most (newest win); default 65 536. */
  readonly receiptCapacity?: number;
  /**
   * Client requestIds each shard remembers at most (newest win), with their first answers and
   * their receipts; default 16 384. Bounds the memory of ids at any rate of new ones: past it, an
   * id is remembered for less than `idempotencyTtlMs` (its answer) and `receiptTtlMs` (release
   * and usage by it).
   */
  readonly idempotencyCapacity?: number;
  /** Prefix of generated request ids; default random, so ids differ across replicas. */
  readonly idPrefix?: string;
  /** How often each shard drops keys that went idle; default 1 s (memory returns within it). */
  readonly idleSweepMs?: number;
}

export type Outcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: DecisionCode; readonly reason: string };

export interface QuotaCounters {
  quota: string;
  approved: number;
  denied: number;
  queued: number;
  activeKeys: number;
}

type Fields = Partial<
  Record<
    'key' | 'quota' | 'cost' | 'wait' | 'maxWaitMs' | 'requestId' | 'leaseId' | 'deadline',
    unknown
  >
>;

const isText = (v: unknown): boolean => typeof v === 'string' && v.length > 0;

/**
 * A cheap guard for hosts that skipped the contract's validation (libs/contracts does the full
 * job): the engine must never throw, hang a waiter or charge for a malformed request.
 */
type Operation = 'acquire' | 'release' | 'usage' | 'stats';

/** Checks only the fields of `op`: fields an operation does not have are ignored, as on the wire. */
function inputProblem(input: Fields, op: Operation): string | undefined {
  if (!isText(input.key)) return 'key: must be a non-empty string';
  if (input.quota !== undefined && !isText(input.quota)) return 'quota: must be a non-empty string';
  if (op === 'stats') return undefined;
  if (input.requestId !== undefined && !isText(input.requestId)) {
    return 'requestId: must be a non-empty string';
  }
  if (op === 'release') {
    const bad = input.leaseId !== undefined && !isText(input.leaseId);
    return bad ? 'leaseId: must be a non-empty string' : undefined;
  }
  if (op === 'acquire') {
    if (input.wait !== undefined && typeof input.wait !== 'boolean')
      return 'wait: must be a boolean';
    const wait = input.maxWaitMs;
    if (
      wait !== undefined &&
      !(typeof wait === 'number' && Number.isSafeInteger(wait) && wait >= 0)
    ) {
      return 'maxWaitMs: must be an integer >= 0';
    }
    const deadline = input.deadline;
    if (deadline !== undefined && !(typeof deadline === 'number' && Number.isFinite(deadline))) {
      return 'deadline: must be a number (epoch ms)';
    }
  }
  return costProblem(input.cost);
}

/**
 * The rate-limit engine: quotas, and the shards that own their keys. Pure and synchronous: every
 * call takes `now` (epoch ms); hosts call `advance(now)` when `nextWakeAt()` comes due so waiters
 * are admitted and idle keys dropped. No I/O, no timers of its own.
 */
export class Engine {
  private readonly shards: Shard[];
  private resolver: QuotaResolver = QuotaResolver.of([]);
  private nextTable = 0;
  /** The `now` of the last advance: a later call with an earlier one is a clock step back. */
  private advancedTo = -Infinity;

  constructor(quotas: readonly QuotaSpec[] = [], options: EngineOptions = {}) {
    const count = options.shards ?? 25;
    if (!Number.isSafeInteger(count) || count < 1)
      throw new RangeError('shards: must be an integer >= 1');
    const prefix = options.idPrefix ?? Math.random().toString(36).slice(2, 8);
    const shardOptions = {
      idempotencyTtlMs: options.idempotencyTtlMs ?? 60_000,
      receiptTtlMs: options.receiptTtlMs ?? 600_000,
      receiptCapacity: 2 ** Math.ceil(Math.log2(Math.max(64, options.receiptCapacity ?? 65_536))),
      idempotencyCapacity: Math.max(1, options.idempotencyCapacity ?? 16_384),
      idleSweepMs: options.idleSweepMs ?? 1_000,
    };
    this.shards = Array.from(
      { length: count },
      (_, i) => new Shard(i, `${prefix}.`, shardOptions, (i + 1) / count),
    );
    this.setQuotas(quotas, 0);
  }

  get shardCount(): number {
    return this.shards.length;
  }

  /**
   * Replaces the quota set. All quotas are validated first (InvalidQuotaError, nothing changed);
   * then existing keys keep their counts under the new limits and waiters are re-examined.
   */
  setQuotas(quotas: readonly QuotaSpec[], now: number): void {
    const prepared = this.prepareQuotas(quotas);
    prepared.step(Infinity);
    this.commitQuotas(prepared, now);
  }

  /**
   * setQuotas in two halves, for a host that must not hold its event loop for a large set: the
   * returned set is validated, compiled and indexed by `step(budget)` calls (each bounded by its
   * budget, in quotas), touching nothing here; commitQuotas then puts it in force, its cost
   * growing with the quotas that changed, not with the set. Changes committed in between are
   * fine: the commit compares with the quotas in force then.
   */
  prepareQuotas(quotas: readonly QuotaSpec[]): PreparedQuotas {
    return new PreparedQuotas(quotas, this.resolver, this.nextTable);
  }

  /** Puts a prepared set in force (see prepareQuotas); throws if `step` has not finished it. */
  commitQuotas(prepared: PreparedQuotas, now: number): void {
    const ready = prepared.result();
    if (ready.base === this.resolver) {
      // Prepared against the quotas in force: only what it removes and changes needs work (its
      // new quotas have their tables, its unchanged ones are those in force).
      for (const q of ready.removed) this.dropTables(q, now);
      for (const [before, q] of ready.changed) this.changeTables(before, q, now);
      this.nextTable = ready.nextTable;
    } else {
      // Another set came in force in between: every quota is compared with it.
      for (const q of this.resolver.all()) if (!ready.names.has(q.name)) this.dropTables(q, now);
      for (const q of ready.compiled) {
        const before = this.resolver.byNameOrUndefined(q.name);
        if (before === q) continue;
        if (before === undefined) q.table = this.nextTable++;
        else this.changeTables(before, q, now);
      }
    }
    this.resolver = ready.resolver;
  }

  /** The quota was deleted: its waiters are told, its state dropped. */
  private dropTables(q: CompiledQuota, now: number): void {
    for (const shard of this.shards) shard.dropQuota(q.table, now);
  }

  /** `q` replaces `before` (same name, same table): keys keep their counts under it. */
  private changeTables(before: CompiledQuota, q: CompiledQuota, now: number): void {
    q.table = before.table;
    const changed = JSON.stringify(before.spec) !== JSON.stringify(q.spec);
    for (const shard of this.shards) shard.changeQuota(q.table, q, changed, now);
  }

  quotas(): QuotaSpec[] {
    return [...this.resolver.all()].map((q) => q.spec);
  }

  /** The quota a request would be decided by, or undefined. */
  resolve(quota: string | undefined, key: string): QuotaSpec | undefined {
    return this.resolver.resolve(quota, key)?.spec;
  }

  private tableOf(q: CompiledQuota, key: string): [Shard, TableState, number] {
    const hash = fnv1a(key, q.seed);
    const shard = this.shards[hash % this.shards.length]!;
    return [shard, shard.table(q.table, q), hash];
  }

  /** Decides a request; one that may wait and has to gets a PendingAcquire, settled later. */
  acquire(input: AcquireInput, now: number): Decision | PendingAcquire {
    const problem = inputProblem(input, 'acquire');
    const q = problem === undefined ? this.resolver.resolve(input.quota, input.key) : undefined;
    if (q === undefined) return this.unresolved(input, problem);
    const hash = fnv1a(input.key, q.seed);
    const shard = this.shards[hash % this.shards.length]!;
    return shard.acquire(shard.tables[q.table] ?? shard.table(q.table, q), input, now, hash);
  }

  /** Answers as acquire would; charges nothing, never waits. */
  decide(input: AcquireInput, now: number): Decision {
    const problem = inputProblem(input, 'acquire');
    const q = problem === undefined ? this.resolver.resolve(input.quota, input.key) : undefined;
    if (q === undefined) return this.unresolved(input, problem);
    const [shard, table, hash] = this.tableOf(q, input.key);
    return shard.decide(table, input, now, hash);
  }

  private unresolved(input: AcquireInput, problem: string | undefined): Decision {
    const key = typeof input.key === 'string' ? input.key : '';
    const id = typeof input.requestId === 'string' ? input.requestId : '';
    const quota = typeof input.quota === 'string' ? input.quota : '';
    if (problem !== undefined) return refusal('INVALID_REQUEST', id, key, quota, problem);
    return input.quota !== undefined
      ? refusal(
          'UNKNOWN_QUOTA',
          id,
          key,
          input.quota,
          `quota: ${JSON.stringify(input.quota)} does not exist`,
        )
      : refusal(
          'UNKNOWN_QUOTA',
          id,
          key,
          '',
          'quota: no quota matches the key and there is no default',
        );
  }

  private lookup(
    input: Fields & { key: string; quota?: string },
    op: Operation,
  ): Outcome<CompiledQuota> {
    const problem = inputProblem(input, op);
    if (problem !== undefined) return { ok: false, code: 'INVALID_REQUEST', reason: problem };
    const quota = input.quota;
    const q = this.resolver.resolve(quota, input.key);
    if (q === undefined) {
      return {
        ok: false,
        code: 'UNKNOWN_QUOTA',
        reason: `quota: ${JSON.stringify(quota ?? 'default')} does not exist`,
      };
    }
    return { ok: true, value: q };
  }

  /** Frees a lease, or gives a plain request's cost back to its window. */
  release(input: ReleaseInput, now: number): Outcome<boolean> {
    const found = this.lookup(input, 'release');
    if (!found.ok) return found;
    const [shard, table, hash] = this.tableOf(found.value, input.key);
    return {
      ok: true,
      value: shard.release(table, input.key, hash, input.requestId, input.leaseId, now),
    };
  }

  /** Settles an admitted request to its actual cost, or records usage nobody acquired. */
  usage(input: UsageInput, now: number): Outcome<KeyStats> {
    const found = this.lookup(input, 'usage');
    if (!found.ok) return found;
    const [shard, table, hash] = this.tableOf(found.value, input.key);
    return {
      ok: true,
      value: shard.usage(table, input.key, hash, input.requestId, input.cost, now),
    };
  }

  stats(input: StatsInput, now: number): Outcome<KeyStats> {
    const found = this.lookup(input, 'stats');
    if (!found.ok) return found;
    const [shard, table, hash] = this.tableOf(found.value, input.key);
    return { ok: true, value: shard.stats(table, input.key, hash, now) };
  }

  /**
   * GoCC's `maxRequests` / `maxRequestsInQueue`: the key's own limit (its quota's first enforced
   * limit) and queue size, changed in place with its counts kept; an absent field keeps what the
   * key has. They hold until 3 windows pass without a request on the key, or its quota changes.
   * Refused (INVALID_REQUEST naming `limit` or `queueSize`), changing nothing, when they cannot
   * apply to the key's quota; and naming `clientOverrides` when the quota does not take them.
   */
  setKeyLimits(input: KeyLimitsInput, now: number): Outcome<KeyLimitsView> {
    const found = this.lookup(input, 'stats');
    if (!found.ok) return found;
    if (found.value.spec.clientOverrides !== true) {
      const name = JSON.stringify(found.value.name);
      return {
        ok: false,
        code: 'INVALID_REQUEST',
        reason: `clientOverrides: quota ${name} does not let clients set a key's limits (its clientOverrides is not true)`,
      };
    }
    const [shard, table, hash] = this.tableOf(found.value, input.key);
    try {
      const view = shard.setKeyLimits(table, input.key, hash, input.limit, input.queueSize, now);
      return { ok: true, value: view };
    } catch (error) {
      if (!(error instanceof InvalidQuotaError)) throw error;
      const field = error.field.startsWith('queue') ? 'queueSize' : 'limit';
      return { ok: false, code: 'INVALID_REQUEST', reason: `${field}: ${error.message}` };
    }
  }

  /** The limits a key is decided by: its quota's, or its own (setKeyLimits). */
  limitsOf(input: StatsInput): Outcome<KeyLimitsView> {
    const found = this.lookup(input, 'stats');
    if (!found.ok) return found;
    const [shard, table, hash] = this.tableOf(found.value, input.key);
    return { ok: true, value: shard.limitsOf(table, input.key, hash) };
  }

  /** Forgets the counts of one (quota, key). */
  reset(input: StatsInput, now: number): Outcome<boolean> {
    const found = this.lookup(input, 'stats');
    if (!found.ok) return found;
    const [shard, table, hash] = this.tableOf(found.value, input.key);
    return { ok: true, value: shard.reset(table, input.key, hash, now) };
  }

  /**
   * Admits waiters whose time came, times out the rest, drops idle state. A `now` before the
   * previous call's is a clock that stepped back: what was dated from the later clock is dated
   * now (Shard.clockSteppedBack), so no timer, lease or wait holds until the clock comes back.
   */
  advance(now: number): void {
    if (now < this.advancedTo) for (const shard of this.shards) shard.clockSteppedBack(now);
    this.advancedTo = now;
    for (const shard of this.shards) shard.advance(now);
  }

  /** The next instant `advance` has work to do (Infinity: none). */
  nextWakeAt(): number {
    let at = Infinity;
    for (const shard of this.shards) at = Math.min(at, shard.nextWakeAt());
    return at;
  }

  /** Answers every waiter, e.g. on shutdown. */
  drain(
    now: number,
    code: DecisionCode = 'UNAVAILABLE',
    reason = 'the limiter is shutting down',
  ): void {
    for (const shard of this.shards) shard.drain(code, reason, now);
  }

  counters(): QuotaCounters[] {
    const out: QuotaCounters[] = [];
    for (const q of this.resolver.all()) {
      const index = q.table;
      const c: QuotaCounters = { quota: q.name, approved: 0, denied: 0, queued: 0, activeKeys: 0 };
      for (const shard of this.shards) {
        const t = shard.tables[index];
        if (t === undefined) continue;
        c.approved += t.approved;
        c.denied += t.denied;
        c.activeKeys += t.keys.size;
        for (const x of t.extras.values()) c.queued += x.waiting;
      }
      out.push(c);
    }
    return out;
  }

  /** Everything held, summed over shards: zero keys, timers and receipts once all went idle. */
  footprint(): {
    keys: number;
    timers: number;
    receipts: number;
    remembered: number;
    waiters: number;
  } {
    const total = { keys: 0, timers: 0, receipts: 0, remembered: 0, waiters: 0 };
    for (const shard of this.shards) {
      const f = shard.footprint();
      total.keys += f.keys;
      total.timers += f.timers;
      total.receipts += f.receipts;
      total.remembered += f.remembered;
      total.waiters += f.waiters;
    }
    return total;
  }

  /**
   * All counters and leases, by quota and limit name (waiters are live callers and not kept).
   * `include` picks quotas by name, so a host persisting a few quotas does not copy every key.
   */
  snapshot(now: number, include: (quota: string) => boolean = () => true): EngineSnapshot {
    const quotas = [...this.resolver.all()].filter((q) => include(q.name));
    const tables = quotas.map((q) => {
      return {
        quota: q,
        tables: this.shards.map((s) => s.tables[q.table]).filter((t) => t !== undefined),
      };
    });
    return snapshotOf(tables, now);
  }

  /**
   * Per-key persistence. The changed rows (written since they were last collected) of the quotas
   * `include` picks, at most `maxRows` a call, their marks cleared; resume with `next` until it is
   * undefined. Keys dropped while changed come out in `gone`. Bounded work per call at any key
   * count, and no copy of the keys is kept between calls.
   */
  collectChanged(
    include: (quota: string) => boolean,
    maxRows: number,
    now: number,
    from?: ChangeCursor,
  ): { rows: ChangedRows; next: ChangeCursor | undefined } {
    return collectChanged(this.shards, include, maxRows, now, from);
  }

  /**
   * The keys held (every quota), at most `maxKeys` a call with bounded work at any key count;
   * resume with `next` until it is undefined.
   */
  listKeys(
    maxKeys: number,
    now: number,
    from?: KeyListCursor,
  ): { keys: HeldKey[]; next: KeyListCursor | undefined } {
    return listHeldKeys(this.shards, maxKeys, now, from);
  }

  /**
   * Marks rows of `quota` changed so the next collection takes them: every row, or those of
   * `keys` (a host whose write failed); a key the engine no longer holds is reported as gone.
   */
  markChanged(quota: string, keys?: readonly string[]): void {
    const q = this.resolver.byNameOrUndefined(quota);
    if (q === undefined) return;
    markChanged(
      this.shards.map((s) => s.tables[q.table]),
      keys,
      (key) => this.tableOf(q, key),
    );
  }

  /**
   * The table index behind a quota name: it changes when the quota is deleted and defined again,
   * so a host can tell that stored keys of the old one no longer belong to it.
   */
  generationOf(quota: string): number | undefined {
    return this.resolver.byNameOrUndefined(quota)?.table;
  }

  /** Compiles the limits stored rows were laid out by (SnapshotError if they do not fit). */
  storedLayout(quota: string, limits: readonly StoredLimitSpec[], stride: number): StoredLayout {
    return StoredLayout.of(quota, limits, stride);
  }

  /**
   * Loads one stored key (`layout.stride` numbers of `state` from `offset`) into its quota, unless
   * the quota is not configured, the engine holds the key already (its state is newer), or the
   * numbers are impossible (unreadable: nothing is loaded).
   */
  restoreStoredKey(
    layout: StoredLayout,
    key: string,
    state: Float64Array,
    offset: number,
    leases: readonly StoredLease[],
    now: number,
  ): RestoredKey {
    const q = this.resolver.byNameOrUndefined(layout.quota);
    if (q === undefined) return 'unknown-quota';
    return restoreStoredKey(q, this.tableOf(q, key), layout, key, state, offset, leases, now);
  }

  /**
   * Loads a snapshot into the current quotas; limits are matched by name, unknown quotas skipped.
   * Returns how many keys were left out for numbers no engine could have written.
   */
  restore(snapshot: EngineSnapshot, now: number): number {
    return restoreInto(
      snapshot,
      now,
      (name) => this.resolver.byNameOrUndefined(name),
      (q, key) => this.tableOf(q, key),
    );
  }
}
