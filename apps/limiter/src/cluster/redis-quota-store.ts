import { costFor, fnv1a, type Cost } from '@app/engine';
import type { Redis } from 'ioredis';
import { ALGORITHM_NAMES, acquireScript } from './cluster-script';

/** A quota as cluster scope needs it: the engine's compiled limits (enforced ones only). */
export interface ClusterQuota {
  readonly name: string;
  readonly limits: readonly ClusterLimit[];
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
  /** Same layout, same state meaning: the hash field the limit's state lives under. */
  readonly layoutKey: string;
}

export interface LimitUse {
  readonly used: number;
  readonly resetMs: number;
}

/** What one script call decided, on Redis's clock. */
export interface ClusterOutcome {
  readonly allowed: boolean;
  /** Redis's TIME, epoch ms. */
  readonly now: number;
  readonly retryAfterMs: number;
  /** Index of the limit that refused, or -1. */
  readonly refusing: number;
  readonly limits: readonly LimitUse[];
}

type Mode = 'acquire' | 'decide';

type ScriptCall = (key: string, ...args: string[]) => Promise<number[]>;

/** Per quota, computed once: its script's command and the arguments that never change. */
interface Prepared {
  readonly call: ScriptCall;
  /** [mode placeholder, n, 7 values per limit]; costs are appended per request. */
  readonly args: readonly string[];
  /** FNV-1a of the quota name, continued with the key for the hash tag. */
  readonly seed: number;
}

/**
 * The store of cluster-scope quotas: Redis is the single source of truth and one script call
 * decides one request for every limit of its quota, all or nothing. The script goes out by
 * EVALSHA; ioredis falls back to EVAL (which loads it again) when Redis answers NOSCRIPT, e.g.
 * after SCRIPT FLUSH or a failover. Contract: never reads the caller's clock; every key of one
 * (quota, key) shares one hash tag, so Redis Cluster never sees CROSSSLOT.
 */
export class RedisQuotaStore {
  private readonly prepared = new WeakMap<ClusterQuota, Prepared>();
  private readonly defined = new Set<string>();

  constructor(private readonly redis: Redis) {}

  /** The Redis key of one (quota, key); the tag is a hash, so any key text is safe in it. */
  static stateKey(quota: string, key: string, seed = fnv1a(quota)): string {
    return `rl:{${fnv1a(key, seed).toString(36)}}:${quota}:${key}`;
  }

  acquire(quota: ClusterQuota, key: string, cost: Cost | undefined): Promise<ClusterOutcome> {
    return this.run('acquire', quota, key, cost);
  }

  decide(quota: ClusterQuota, key: string, cost: Cost | undefined): Promise<ClusterOutcome> {
    return this.run('decide', quota, key, cost);
  }

  private async run(
    mode: Mode,
    quota: ClusterQuota,
    key: string,
    cost: Cost | undefined,
  ): Promise<ClusterOutcome> {
    const p = this.prepare(quota);
    const args = p.args.slice();
    args[0] = mode;
    for (const l of quota.limits) args.push(String(costFor(cost, l.unit)));
    const reply = await p.call(RedisQuotaStore.stateKey(quota.name, key, p.seed), ...args);
    const limits: LimitUse[] = [];
    for (let i = 4; i + 1 < reply.length; i += 2) {
      limits.push({ used: reply[i]!, resetMs: reply[i + 1]! });
    }
    return {
      allowed: reply[0] === 1,
      now: reply[1]!,
      retryAfterMs: reply[2]!,
      refusing: reply[3]! - 1,
      limits,
    };
  }

  private prepare(quota: ClusterQuota): Prepared {
    let p = this.prepared.get(quota);
    if (p !== undefined) return p;
    const used = ALGORITHM_NAMES.filter((a) => quota.limits.some((l) => l.algorithm === a));
    const command = `rateLimit_${used.join('_')}`;
    if (!this.defined.has(command)) {
      this.redis.defineCommand(command, { numberOfKeys: 1, lua: acquireScript(used) });
      this.defined.add(command);
    }
    const commands = this.redis as unknown as Record<string, ScriptCall>;
    const args = ['', String(quota.limits.length)];
    for (const l of quota.limits) {
      args.push(`${l.name}|${l.layoutKey}`, l.algorithm, String(l.limit), String(l.windowMs));
      args.push(String(l.bucketMs), String(l.ringSize), String(l.capacity));
    }
    p = { call: commands[command]!.bind(this.redis), args, seed: fnv1a(quota.name) };
    this.prepared.set(quota, p);
    return p;
  }
}
