import { costFor, fnv1a, type Cost } from '@app/engine';
import type { Cluster, Redis } from 'ioredis';
import { ALGORITHM_NAMES, driverScript, scriptAlgorithm } from './cluster-script';
import { ClusterCircuits, standaloneCircuits, type NodeCircuits } from './node-circuits';
import {
  STORE_TIMEOUT_MS,
  StoreTimeoutError,
  afterDeadline,
  withDeadline,
  type Circuit,
} from './store-circuit';

/** A standalone Redis or a Redis Cluster client: both define and run scripts the same way. */
export type ScriptClient = Redis | Cluster;

/** A quota as cluster scope needs it: the engine's compiled limits (enforced ones only). */
export interface ClusterQuota {
  readonly name: string;
  readonly limits: readonly ClusterLimit[];
  readonly concurrency?: { readonly max: number; readonly leaseTtlMs: number } | undefined;
}

export interface ClusterLimit {
  readonly name: string;
  readonly unit: string;
  readonly algorithm: string;
  readonly limit: number;
  readonly capacity: number;
  readonly windowMs: number;
  readonly bucketMs: number;
  readonly ringSize: number;
  /** A sliding_window kept as an exact log: its entries (0: none) and whether each is one unit. */
  readonly logSize: number;
  readonly logUnits: boolean;
  /** Same layout, same state meaning: the hash field the limit's state lives under. */
  readonly layoutKey: string;
  /** Calendar-aligned windows: where the window around an instant starts and ends. */
  readonly calendar?: { at(ms: number): { readonly start: number; readonly end: number } };
}

export interface LimitUse {
  readonly used: number;
  readonly resetMs: number;
}

export type OutcomeCode = 'OK' | 'RATE_LIMITED' | 'CONCURRENCY_LIMITED';

/** What one request decided in Redis, on Redis's clock. */
export interface ClusterOutcome {
  readonly allowed: boolean;
  readonly code: OutcomeCode;
  /** Redis's TIME, epoch ms. */
  readonly now: number;
  readonly retryAfterMs: number;
  /** Index of the limit that refused, or -1. */
  readonly refusing: number;
  /** The admission's sequence number on its (quota, key): names its receipt and lease; 0 if none. */
  readonly seq: number;
  /** The first answer to the same client requestId, given again and charged once. */
  readonly replayed: boolean;
  readonly inFlight: number;
  readonly approved: number;
  readonly denied: number;
  readonly limits: readonly LimitUse[];
}

/** What a replica asks of a capacity lease; arrays hold one entry per limit of the quota. */
export interface LeaseAsk {
  /** The replica's name: one live grant per replica and key. */
  readonly holder: string;
  /** The grant being given back (its seq), or 0. */
  readonly prevSeq: number;
  /** Replicas expected to share the key (fairness only, never safety). */
  readonly replicas: number;
  readonly ttlMs: number;
  readonly horizonMs: number;
  /** Decisions this replica made from its slice since its last lease call (the key's stats). */
  readonly approved: number;
  readonly denied: number;
  readonly want: readonly number[];
  readonly need: readonly number[];
  readonly unspent: readonly number[];
}

export interface LeaseGrant {
  /** Granted: `allowed`, `seq` names the grant, `now` is Redis's clock when it was charged. */
  readonly outcome: ClusterOutcome;
  /** Units charged per limit (0 where none). */
  readonly granted: readonly number[];
  /** Per limit, the Redis instant before which its units must be spent. */
  readonly until: readonly number[];
  /** What other replicas did to this holder's admissions since its last lease call. */
  readonly notes: readonly LeaseNote[];
}

/**
 * A release of an admission this holder made from a slice, or its usage settled elsewhere (charged
 * whole there: the holder gives its estimate back).
 */
export interface LeaseNote {
  readonly kind: 'release' | 'usage';
  readonly id: string;
}

/** acquire: charge when admitted; wait: an acquire whose refusal is not final; decide: dry run. */
export type DecisionOp = 'acquire' | 'wait' | 'decide';
type Op = DecisionOp | 'release' | 'usage' | 'stats' | 'reset';

const CODES: readonly OutcomeCode[] = ['OK', 'RATE_LIMITED', 'CONCURRENCY_LIMITED'];
const DAY_MS = 86_400_000;

/**
 * Requests one script call may carry: bounds how long Redis is busy with one call. Small enough
 * that a turn's requests make several calls, sent one per turn: Redis decides one while this
 * process handles the replies of the one before (16 against 64: bench:cluster (a) 1.02x-1.20x
 * against 0.82x-0.89x of raw EVALSHA, (d) 2.4x-2.6x against 1.3x-1.4x; docs/benchmarks.md).
 */
export const MAX_BATCH = 16;

/** Receipts kept per (quota, key) for release and usage settle: a ring, oldest overwritten. */
export const RECEIPTS_PER_KEY = 4096;

export interface StoreOptions {
  /**
   * Coalesce the requests of one quota made in the same turn of the event loop into one script
   * call. Off for Redis Cluster, where one call may only touch keys of one slot.
   */
  readonly coalesce?: boolean;
  /** How long the first answer to a client requestId is given again (the contract's 60 s). */
  readonly memoTtlMs?: number;
  /**
   * REDIS_TIMEOUT_MS: the longest a call may take from the moment it is asked (batching, queueing
   * behind other calls on the connection and a NOSCRIPT reload included) before it fails.
   */
  readonly timeoutMs?: number;
  /** The nodes' circuits; by default one per standalone client, one per master of a cluster. */
  readonly circuits?: NodeCircuits;
}

type ScriptCall = (...args: (string | number)[]) => Promise<number[][]>;

/** Per quota, computed once: its script's command and the arguments that never change. */
interface Prepared {
  readonly call: ScriptCall;
  readonly header: readonly (string | number)[];
  /** FNV-1a of the quota name, continued with the key for the hash tag. */
  readonly seed: number;
  /** The calendar boundaries in the header cover Date.now() until then. */
  readonly validUntil: number;
}

interface Batch {
  readonly prepared: Prepared;
  readonly circuit: Circuit;
  readonly keys: string[];
  readonly args: (string | number)[];
  readonly settle: { resolve(reply: number[]): void; reject(error: unknown): void }[];
  /** Fails the batch REDIS_TIMEOUT_MS after its first request asked. */
  readonly timer: NodeJS.Timeout;
  /** Answered (by Redis, an error or the timer): whatever comes later is dropped. */
  done: boolean;
}

/**
 * The store of cluster-scope quotas: Redis is the single source of truth and one script call
 * decides each request for every limit of its quota, all or nothing. Requests of one quota made in
 * the same turn of the event loop share one call (decided in arrival order): that turns the
 * script's fixed cost per call into a cost per batch. The script goes out by EVALSHA; ioredis
 * falls back to EVAL (which loads it again) when Redis answers NOSCRIPT, e.g. after SCRIPT FLUSH
 * or a failover. Contract: never reads the caller's clock for a decision (calendar boundaries
 * around it are given, Redis's TIME picks among them); every field of one (quota, key) lives in
 * one hash, so Redis Cluster never sees CROSSSLOT.
 *
 * Every call settles within `timeoutMs` of being asked (its batch's wait for the next turn, a full
 * batch's wait for its own turn, the connection and an EVAL after NOSCRIPT included), whatever the
 * client does: ioredis's own timeout starts only when it writes a command. Calls go through their
 * node's circuit: while it is open they fail at once with its `CircuitOpenError`, and nothing is
 * sent.
 */
export class RedisQuotaStore {
  private readonly prepared = new WeakMap<ClusterQuota, Prepared>();
  private readonly defined = new Set<string>();
  private readonly open = new Map<Prepared, Batch>();
  private readonly full: Batch[] = [];
  private scheduled = false;
  private readonly coalesce: boolean;
  private readonly memoTtlMs: number;
  private readonly timeoutMs: number;
  readonly circuits: NodeCircuits;

  constructor(
    private readonly redis: ScriptClient,
    options: StoreOptions = {},
  ) {
    this.coalesce = options.coalesce ?? true;
    this.memoTtlMs = options.memoTtlMs ?? 60_000;
    this.timeoutMs = options.timeoutMs ?? STORE_TIMEOUT_MS;
    const timeoutMs = this.timeoutMs;
    this.circuits =
      options.circuits ??
      (redis.isCluster
        ? new ClusterCircuits(redis as Cluster, { timeoutMs })
        : standaloneCircuits(redis as Redis, { timeoutMs }));
  }

  /** The Redis key of one (quota, key); the tag is a hash, so any key text is safe in it. */
  static stateKey(quota: string, key: string, seed = fnv1a(quota)): string {
    return `rl:{${fnv1a(key, seed).toString(36)}}:${quota}:${key}`;
  }

  /** The requestId of an admission the caller did not name: releasable on any replica. */
  static admittedId(seq: number): string {
    return `cs-${seq}`;
  }

  static leaseId(seq: number): string {
    return `cl-${seq}`;
  }

  acquire(
    quota: ClusterQuota,
    key: string,
    cost: Cost | undefined,
    requestId = '',
  ): Promise<ClusterOutcome> {
    return this.decision('acquire', quota, key, cost, requestId);
  }

  decide(quota: ClusterQuota, key: string, cost: Cost | undefined): Promise<ClusterOutcome> {
    return this.decision('decide', quota, key, cost, '');
  }

  async decision(
    op: DecisionOp,
    quota: ClusterQuota,
    key: string,
    cost: Cost | undefined,
    requestId: string,
  ): Promise<ClusterOutcome> {
    return outcomeOf(await this.run(op, quota, key, requestId, '', costsOf(quota, cost)));
  }

  /** Frees a lease, or gives an admitted request's cost back (GoCC); false when not found. */
  async release(
    quota: ClusterQuota,
    key: string,
    requestId: string | undefined,
    leaseId: string | undefined,
  ): Promise<boolean> {
    const reply = await this.run(
      'release',
      quota,
      key,
      requestId ?? '',
      leaseId ?? '',
      noCost(quota),
    );
    return reply[0] === 1;
  }

  /** Settles an admitted request to its actual cost, or records usage nobody acquired. */
  async usage(
    quota: ClusterQuota,
    key: string,
    requestId: string | undefined,
    cost: Cost,
  ): Promise<ClusterOutcome> {
    const costs = costsOf(quota, cost);
    return outcomeOf(await this.run('usage', quota, key, requestId ?? '', '', costs));
  }

  async stats(quota: ClusterQuota, key: string): Promise<ClusterOutcome> {
    return outcomeOf(await this.run('stats', quota, key, '', '', noCost(quota)));
  }

  /** Forgets the key's counts (admin resetKey); leases stay. False when nothing was kept. */
  async reset(quota: ClusterQuota, key: string): Promise<boolean> {
    const reply = await this.run('reset', quota, key, '', '', noCost(quota));
    return reply[0] === 1;
  }

  /**
   * A capacity lease (docs/architecture.md): gives `holder`'s grant `prevSeq` back with its unspent
   * units, adds this replica's leased decisions to the key's stats, then charges a new slice per
   * limit sized by `want`, at least `need` (all or nothing), capped at a share of what remains.
   */
  async lease(quota: ClusterQuota, key: string, ask: LeaseAsk): Promise<LeaseGrant> {
    const args: (string | number)[] = ['lease', ask.holder, ask.prevSeq, ask.replicas];
    args.push(ask.ttlMs, ask.horizonMs, ask.approved, ask.denied);
    for (let i = 0; i < quota.limits.length; i++) {
      args.push(ask.want[i] ?? 0, ask.need[i] ?? 0, ask.unspent[i] ?? 0);
    }
    const reply = await this.call(quota, key, args);
    const n = quota.limits.length;
    const granted: number[] = [];
    const until: number[] = [];
    const base = 9 + 2 * n;
    for (let i = 0; i < n; i++) {
      granted.push(reply[base + 2 * i]!);
      until.push(reply[base + 2 * i + 1]!);
    }
    const notes: LeaseNote[] = [];
    for (let i = base + 2 * n; i + 1 < reply.length; i += 2) {
      notes.push({ kind: reply[i] === 1 ? 'release' : 'usage', id: String(reply[i + 1]) });
    }
    return { outcome: outcomeOf(reply.slice(0, base)), granted, until, notes };
  }

  /** A leased admission's cost changed once its grant ended: charged now, or given back. */
  async settle(
    quota: ClusterQuota,
    key: string,
    chargedAt: number,
    until: readonly number[],
    delta: readonly number[],
  ): Promise<ClusterOutcome> {
    const args: (string | number)[] = ['settle', chargedAt];
    for (let i = 0; i < quota.limits.length; i++) args.push(until[i] ?? 0, delta[i] ?? 0);
    return outcomeOf(await this.call(quota, key, args));
  }

  private run(
    op: Op,
    quota: ClusterQuota,
    key: string,
    requestId: string,
    leaseId: string,
    costs: readonly number[],
  ): Promise<number[]> {
    return this.call(quota, key, [op, requestId, leaseId, ...costs]);
  }

  /** One request of any op (`args` starts with the op), in this turn's batch of its quota. */
  private call(quota: ClusterQuota, key: string, args: (string | number)[]): Promise<number[]> {
    const p = this.prepare(quota);
    const redisKey = RedisQuotaStore.stateKey(quota.name, key, p.seed);
    const circuit = this.circuits.forKey(redisKey);
    if (circuit.isOpen) return Promise.reject(circuit.refusal);
    if (!this.coalesce) {
      const call = p.call(1, redisKey, ...p.header, ...args);
      return this.bounded(circuit, call).then((r) => r[0]!);
    }
    let batch = this.open.get(p);
    if (batch === undefined) {
      batch = this.newBatch(p, circuit);
      this.open.set(p, batch);
    }
    batch.keys.push(redisKey);
    for (const a of args) batch.args.push(a);
    const reply = new Promise<number[]>((resolve, reject) => {
      batch.settle.push({ resolve, reject });
    });
    if (batch.keys.length >= MAX_BATCH) {
      this.open.delete(p);
      this.full.push(batch);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    return reply;
  }

  /**
   * Sends one full batch per turn of the event loop, then what is left: batches that reach Redis
   * at different moments are answered at different moments, so Redis decides one batch while
   * this process handles the replies of the previous one, instead of both waiting in turn.
   */
  private readonly flush = (): void => {
    this.scheduled = false;
    const next = this.full.shift();
    if (next !== undefined) {
      this.send(next);
    } else {
      for (const batch of this.open.values()) this.send(batch);
      this.open.clear();
    }
    if (this.full.length > 0 || this.open.size > 0) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  };

  private send(batch: Batch): void {
    if (batch.done) return; // timed out before it could be sent: its requests are answered
    const { prepared: p, keys, args } = batch;
    p.call(keys.length, ...keys, ...p.header, ...args).then(
      (replies) => this.answer(batch, undefined, replies),
      (error: unknown) => this.answer(batch, error, undefined),
    );
  }

  /** A standalone node's batch (one circuit per store), timed from its first request. */
  private newBatch(prepared: Prepared, circuit: Circuit): Batch {
    const batch: Batch = {
      prepared,
      circuit,
      keys: [],
      args: [],
      settle: [],
      timer: afterDeadline(this.timeoutMs, () => {
        if (this.open.get(prepared) === batch) this.open.delete(prepared);
        this.answer(batch, new StoreTimeoutError(circuit.node, this.timeoutMs), undefined);
      }),
      done: false,
    };
    return batch;
  }

  private answer(batch: Batch, error: unknown, replies: number[][] | undefined): void {
    if (batch.done) return;
    batch.done = true;
    clearTimeout(batch.timer);
    batch.circuit.record(error, batch.settle.length);
    const settle = batch.settle;
    if (replies !== undefined) {
      for (let i = 0; i < settle.length; i++) settle[i]!.resolve(replies[i]!);
    } else {
      for (const s of settle) s.reject(error);
    }
  }

  /** One call of its own (Redis Cluster), failed REDIS_TIMEOUT_MS after it was asked. */
  private bounded<T>(circuit: Circuit, call: Promise<T>): Promise<T> {
    const late = (): Error => new StoreTimeoutError(circuit.node, this.timeoutMs);
    return withDeadline(call, this.timeoutMs, late).then(
      (value) => {
        circuit.record(undefined);
        return value;
      },
      (error: unknown) => {
        circuit.record(error);
        throw error;
      },
    );
  }

  private prepare(quota: ClusterQuota): Prepared {
    const known = this.prepared.get(quota);
    if (known !== undefined && Date.now() < known.validUntil) return known;
    const used = ALGORITHM_NAMES.filter((a) => quota.limits.some((l) => l.algorithm === a));
    const command = `rateLimit_${used.join('_')}`;
    const lua = driverScript(used);
    if (!this.defined.has(command)) {
      // No numberOfKeys: every call says how many requests (keys) it carries.
      this.redis.defineCommand(command, { lua });
      this.defined.add(command);
    }
    const commands = this.redis as unknown as Record<string, ScriptCall>;
    const evalsha = commands[command]!.bind(this.redis);
    const now = Date.now();
    let validUntil = Infinity;
    const header: (string | number)[] = [quota.limits.length];
    for (const l of quota.limits) {
      header.push(`${l.name}|${l.layoutKey}`, scriptAlgorithm(l), l.limit, l.windowMs);
      header.push(l.bucketMs, l.ringSize, l.capacity);
      if (l.calendar === undefined) {
        header.push('');
      } else {
        header.push(calendarBounds(l.calendar, now).join(','));
        validUntil = now + DAY_MS;
      }
      header.push(l.logSize, l.logUnits ? 1 : 0);
    }
    header.push(quota.concurrency?.max ?? 0, quota.concurrency?.leaseTtlMs ?? 0);
    header.push(RECEIPTS_PER_KEY, this.memoTtlMs);
    const p: Prepared = {
      call: withEval(evalsha, lua, this.redis),
      header,
      seed: known?.seed ?? fnv1a(quota.name),
      validUntil,
    };
    this.prepared.set(quota, p);
    return p;
  }
}

/**
 * EVALSHA, and on NOSCRIPT one EVAL, which carries the script text and so cannot meet NOSCRIPT.
 * ioredis reloads a flushed script once, but its retry may itself go out as EVALSHA (another call
 * reloaded it first) and meet a second SCRIPT FLUSH; without this such a request would fail.
 */
function withEval(call: ScriptCall, lua: string, redis: ScriptClient): ScriptCall {
  return (...args) =>
    call(...args).catch((error: unknown) => {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      const [numKeys, ...rest] = args as [number, ...(string | number)[]];
      return redis.eval(lua, numKeys, ...rest) as Promise<number[][]>;
    });
}

/**
 * Window boundaries from two days before `now` to three days after it: Redis's clock picks the
 * window among them, so replicas whose clocks differ by up to a day still agree.
 */
export function calendarBounds(calendar: NonNullable<ClusterLimit['calendar']>, now: number) {
  const first = calendar.at(now - 2 * DAY_MS);
  const bounds = [first.start, first.end];
  while (bounds[bounds.length - 1]! <= now + 3 * DAY_MS) {
    bounds.push(calendar.at(bounds[bounds.length - 1]!).end);
  }
  return bounds;
}

function costsOf(quota: ClusterQuota, cost: Cost | undefined): number[] {
  return quota.limits.map((l) => costFor(cost, l.unit));
}

/** Operations that charge nothing still send one cost per limit: the script's layout is fixed. */
function noCost(quota: ClusterQuota): number[] {
  return quota.limits.map(() => 0);
}

function outcomeOf(reply: number[]): ClusterOutcome {
  const limits: LimitUse[] = [];
  for (let i = 9; i + 1 < reply.length; i += 2) {
    limits.push({ used: reply[i]!, resetMs: reply[i + 1]! });
  }
  const code = CODES[reply[0]!] ?? 'RATE_LIMITED';
  return {
    allowed: code === 'OK',
    code,
    now: reply[1]!,
    retryAfterMs: reply[2]!,
    refusing: reply[3]! - 1,
    seq: reply[4]!,
    replayed: reply[5] === 1,
    inFlight: reply[6]!,
    approved: reply[7]!,
    denied: reply[8]!,
    limits,
  };
}
