import { REPLICA_SILENT_AFTER_MS, type QuotaSpec, type Scope } from '@app/contracts';
import { isDeepStrictEqual } from 'node:util';

/**
 * Local scope with several replicas admits limit x replicas: that is what local means, but an
 * operator should hear it from the replica, not find it in the docs after the fact. Replicas learn
 * about each other from the StatsReports every replica publishes (ControlNames.statsReport), by
 * their headers alone (STATS_REPORT_HEADERS): the body grows with the quotas.
 */

/** Replicas of a queue group a limiter tracks at most: reports from more are not counted. */
export const MAX_TRACKED_PEERS = 1024;

/** The replicas of one NATS queue group (they share its requests), from their StatsReports. */
export class QueueGroupPeers {
  private readonly heardAt = new Map<string, number>();

  constructor(
    private readonly self: string,
    readonly queueGroup: string,
  ) {}

  /** Takes a report's headers; other queue groups (or limiters that send none) are not peers. */
  hear(replica: string | undefined, queueGroup: string | undefined, now: number): void {
    if (replica === undefined || replica === '' || queueGroup !== this.queueGroup) return;
    this.forgetSilent(now);
    if (!this.heardAt.has(replica) && this.heardAt.size >= MAX_TRACKED_PEERS) return;
    this.heardAt.set(replica, now);
  }

  /** Replicas of the group heard within REPLICA_SILENT_AFTER_MS, this one included once heard. */
  replicas(now: number): number {
    this.forgetSilent(now);
    return this.heardAt.size;
  }

  /** The other replicas of the group. */
  peers(now: number): number {
    this.forgetSilent(now);
    return this.heardAt.size - (this.heardAt.has(this.self) ? 1 : 0);
  }

  private forgetSilent(now: number): void {
    for (const [replica, at] of this.heardAt) {
      if (now - at >= REPLICA_SILENT_AFTER_MS) this.heardAt.delete(replica);
    }
  }
}

/**
 * The quotas worth a warning when the replica has peers: every quota this replica decides in its
 * own memory (`scope: local`, or `scope: cluster` without Redis) that limits something, except
 * GoCC's, which are per replica by intent (GoCC itself counts per instance): the `default` quota
 * exactly as the GoCC variables define it, and the quotas of a GoCC file or import (`gocc:…`,
 * merges of its entries included).
 */
export function replicatedLocalQuotas(
  quotas: readonly QuotaSpec[],
  scopeOf: (name: string) => Scope,
  goccDefault: QuotaSpec,
): string[] {
  return quotas
    .filter((q) => scopeOf(q.name) === 'local')
    .filter((q) => q.limits.some((l) => l.limit > 0) || q.concurrency !== undefined)
    .filter((q) => !isPerReplicaByIntent(q, goccDefault))
    .map((q) => q.name);
}

function isPerReplicaByIntent(q: QuotaSpec, goccDefault: QuotaSpec): boolean {
  if (q.name.startsWith('gocc:')) return true;
  return q.name === goccDefault.name && isDeepStrictEqual(q, goccDefault);
}

const NAMES_SHOWN = 10;

/** Says it once per list of such quotas, the first time peers are seen while the list is in force. */
export class LocalScopeWarning {
  private quotas: readonly string[] = [];
  private warnedFor: string | undefined;

  /** The quotas in force changed: `names` from replicatedLocalQuotas. */
  setQuotas(names: readonly string[]): void {
    this.quotas = names;
  }

  /** The warning to log now, or undefined (no peers, nothing to warn about, or said already). */
  check(peers: number, queueGroup: string): string | undefined {
    if (peers === 0 || this.quotas.length === 0) return undefined;
    const key = this.quotas.join('\n');
    if (key === this.warnedFor) return undefined;
    this.warnedFor = key;
    const shown = this.quotas.slice(0, NAMES_SHOWN).join(', ');
    const more =
      this.quotas.length > NAMES_SHOWN ? ` and ${this.quotas.length - NAMES_SHOWN} more` : '';
    return (
      `${peers} other replica${peers === 1 ? '' : 's'} share${peers === 1 ? 's' : ''} NATS queue ` +
      `group "${queueGroup}" with this one, and the quotas ${shown}${more} are local: each ` +
      `replica admits up to their limits on its own, up to ${peers + 1}x the limit in all. For ` +
      `one limit across replicas, give them scope: cluster and set REDIS_URL ` +
      `(docs/operations.md, "Local scope and replicas").`
    );
  }
}
