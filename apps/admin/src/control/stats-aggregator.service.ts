import {
  controlNames,
  parseStatsReport,
  REPLICA_SILENT_AFTER_MS,
  type Scope,
  type StatsReport,
} from '@app/contracts';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';
import { defer, Subject, startWith, type Observable } from 'rxjs';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import { NatsConnectionService } from './nats-connection.service';

/**
 * How often `updates()` emits (docs/contract.md, Admin GraphQL: statsUpdated at least once a
 * second).
 */
export const STATS_UPDATE_EVERY_MS = 1_000;

/** One quota's counts summed over the live replicas. */
export interface QuotaStatsSum {
  quota: string;
  approved: number;
  denied: number;
  queued: number;
  activeKeys: number;
  /**
   * `local` as soon as one replica decides the quota in its own memory (it then admits up to the
   * limit on its own), `cluster` when every reporting replica decides it in Redis; absent when no
   * replica said (limiters that predate the field).
   */
  scope?: Scope;
}

/** The cluster-wide stats (GraphQL `stats` / `statsUpdated`). */
export interface StatsUpdate {
  /** Epoch ms on the admin's clock when this was computed. */
  at: number;
  /** Limiter replicas heard from within REPLICA_SILENT_AFTER_MS. */
  replicas: number;
  /** Sorted by quota name. */
  quotas: QuotaStatsSum[];
}

interface ReplicaState {
  /** Admin clock, so that a limiter's skewed clock cannot keep it alive or drop it early. */
  readonly heardAt: number;
  readonly report: StatsReport;
}

/**
 * Listens to the StatsReports every limiter replica publishes every 500 ms, keeps the latest one
 * per replica, forgets replicas silent for REPLICA_SILENT_AFTER_MS, and sums them per quota.
 *
 * `updates()` shares one timer (started with the module, stopped on destroy): every subscriber
 * gets `current()` at once and then every STATS_UPDATE_EVERY_MS, also while no limiter runs
 * (replicas 0) and while NATS is down.
 */
@Injectable()
export class StatsAggregator implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('StatsAggregator');
  private readonly subject: string;
  private readonly replicas = new Map<string, ReplicaState>();
  private readonly ticks = new Subject<StatsUpdate>();
  private timer: NodeJS.Timeout | undefined;
  private subscription: { readonly nc: NatsConnection; readonly sub: Subscription } | undefined;
  private removeUpListener: (() => void) | undefined;
  private malformed = 0;

  constructor(
    @Inject(ADMIN_SETTINGS) settings: AdminSettings,
    private readonly nats: NatsConnectionService,
  ) {
    this.subject = controlNames(settings.subjectPrefix).statsReport;
  }

  /** Stats reports refused as malformed since start. */
  get malformedReports(): number {
    return this.malformed;
  }

  onModuleInit(): void {
    this.timer = setInterval(() => this.ticks.next(this.current()), STATS_UPDATE_EVERY_MS);
    this.timer.unref();
    this.removeUpListener = this.nats.onUp((nc) => this.listen(nc));
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.removeUpListener?.();
    const sub = this.subscription?.sub;
    this.subscription = undefined;
    if (sub !== undefined && !sub.isClosed()) sub.unsubscribe();
    this.ticks.complete();
  }

  /** Takes one StatsReport message; false (and nothing changes) when it is malformed. */
  accept(data: Uint8Array): boolean {
    const report = parseStatsReport(data);
    if (report === undefined) {
      if (this.malformed++ === 0) {
        this.logger.warn(`ignoring a malformed stats report on ${this.subject} (logged once)`);
      }
      return false;
    }
    this.replicas.set(report.replica, { heardAt: Date.now(), report });
    return true;
  }

  /** Replicas heard from within REPLICA_SILENT_AFTER_MS. */
  liveReplicas(): number {
    this.forgetSilent(Date.now());
    return this.replicas.size;
  }

  /**
   * How many quotas `current()` lists, about, at no cost: the longest report of a live replica.
   * Replicas report the quotas in force, the same set but while a change propagates.
   */
  largestReport(): number {
    let most = 0;
    for (const { report } of this.replicas.values()) most = Math.max(most, report.quotas.length);
    return most;
  }

  current(): StatsUpdate {
    const at = Date.now();
    this.forgetSilent(at);
    const sums = new Map<string, QuotaStatsSum>();
    for (const { report } of this.replicas.values()) {
      for (const count of report.quotas) {
        const sum = sums.get(count.quota);
        if (sum === undefined) {
          sums.set(count.quota, {
            quota: count.quota,
            approved: count.approved,
            denied: count.denied,
            queued: count.queued,
            activeKeys: count.activeKeys,
            ...(count.scope !== undefined && { scope: count.scope }),
          });
        } else {
          sum.approved += count.approved;
          sum.denied += count.denied;
          sum.queued += count.queued;
          sum.activeKeys += count.activeKeys;
          sum.scope = weakerScope(sum.scope, count.scope);
        }
      }
    }
    const quotas = [...sums.values()].sort((a, b) =>
      a.quota < b.quota ? -1 : a.quota > b.quota ? 1 : 0,
    );
    return { at, replicas: this.replicas.size, quotas };
  }

  /** `current()` now, then every STATS_UPDATE_EVERY_MS from the shared timer; ends on destroy. */
  updates(): Observable<StatsUpdate> {
    return defer(() => this.ticks.pipe(startWith(this.current())));
  }

  private listen(nc: NatsConnection): void {
    // nats.js resubscribes by itself after a reconnect: one subscription per connection.
    if (this.subscription?.nc === nc) return;
    const sub = nc.subscribe(this.subject, {
      callback: (error, msg) => {
        if (error === null) this.accept(msg.data);
      },
    });
    this.subscription = { nc, sub };
  }

  private forgetSilent(now: number): void {
    for (const [replica, state] of this.replicas) {
      if (now - state.heardAt >= REPLICA_SILENT_AFTER_MS) this.replicas.delete(replica);
    }
  }
}

/** The scope two replicas' reports give a quota together: local wins, it is the weaker promise. */
function weakerScope(a: Scope | undefined, b: Scope | undefined): Scope | undefined {
  if (a === 'local' || b === 'local') return 'local';
  return a ?? b;
}
