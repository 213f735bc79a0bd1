import {
  controlNames,
  MAX_STATS_REPORT_BYTES,
  mergeTopRefused,
  MessageVerifier,
  parseStatsReport,
  REPLICA_SILENT_AFTER_MS,
  SIGNATURE_HEADER,
  STATS_REPORT_HEADERS,
  type RefusedKey,
  type Scope,
  type StatsReport,
} from '@app/contracts';
import { ThrottledLog } from '@app/logging';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { MsgHdrs, NatsConnection, Subscription } from 'nats';
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
  /**
   * The keys refused most in the replicas' last report periods (about 500 ms), counts summed per
   * key over the replicas, most first: at most TOP_REFUSED_K.
   */
  topRefused: RefusedKey[];
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
  /** The report's size on the wire: its share of the bytes held. */
  readonly bytes: number;
}

/**
 * What the admin holds of the replicas' reports, at most (docs/operations.md, "Control keys"):
 * a report flood (forged replicas, each with many quotas) is refused past these, so the memory
 * it takes stays bounded. A report is refused unread past MAX_STATS_REPORT_BYTES.
 */
export interface ReportBounds {
  readonly replicas: number;
  readonly quotasPerReport: number;
  /** Bytes of the latest reports of every replica held, together. */
  readonly bytes: number;
}

export const REPORT_BOUNDS: ReportBounds = {
  replicas: 1_000,
  quotasPerReport: 10_000,
  bytes: 16 * 1024 * 1024,
};

/** Other bounds than REPORT_BOUNDS (a test that floods a small table). */
export const STATS_REPORT_BOUNDS = Symbol('StatsReportBounds');

/** Forged or oversized reports can come at will: their lines are rate-limited. */
const refusedLog = new ThrottledLog('StatsAggregator', 'control.report-refused', 'warn');

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
  private refused = 0;
  private bytesHeld = 0;
  private sweptAt = -Infinity;
  /** REPORT_PUBLIC_KEYS: reports they did not sign are ignored; none: every report counts. */
  private readonly verifier: MessageVerifier | undefined;

  constructor(
    @Inject(ADMIN_SETTINGS) settings: AdminSettings,
    private readonly nats: NatsConnectionService,
    @Optional()
    @Inject(STATS_REPORT_BOUNDS)
    private readonly bounds: ReportBounds = REPORT_BOUNDS,
  ) {
    this.subject = controlNames(settings.subjectPrefix).statsReport;
    const keys = settings.signing.reportKeys;
    this.verifier = keys.length > 0 ? new MessageVerifier(keys) : undefined;
  }

  /** Stats reports refused as malformed since start. */
  get malformedReports(): number {
    return this.malformed;
  }

  /** Stats reports refused since start: unsigned or wrongly signed, replayed, or over a bound. */
  get refusedReports(): number {
    return this.refused;
  }

  /** What is held of the replicas' reports now (its bounds bound it). */
  get held(): { readonly replicas: number; readonly quotas: number; readonly bytes: number } {
    let quotas = 0;
    for (const { report } of this.replicas.values()) quotas += report.quotas.length;
    return { replicas: this.replicas.size, quotas, bytes: this.bytesHeld };
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

  /**
   * Takes one StatsReport message; false (and nothing changes) when it is refused: too large,
   * not signed by a REPORT_PUBLIC_KEYS key (when set), malformed, or past its bounds.
   */
  accept(data: Uint8Array, headers?: MsgHdrs): boolean {
    const now = Date.now();
    if (data.byteLength > MAX_STATS_REPORT_BYTES) {
      return this.refuse(`${data.byteLength} bytes, more than ${MAX_STATS_REPORT_BYTES}`);
    }
    if (this.verifier !== undefined) {
      const line = headers?.get(SIGNATURE_HEADER) || undefined;
      const signed = [
        headers?.get(STATS_REPORT_HEADERS.replica) ?? '',
        headers?.get(STATS_REPORT_HEADERS.queueGroup) ?? '',
      ];
      const check = this.verifier.check(line, this.subject, signed, data, now);
      if (!check.ok) return this.refuse(`${check.reason} (REPORT_PUBLIC_KEYS)`);
    }
    const report = parseStatsReport(data);
    if (report === undefined) {
      if (this.malformed++ === 0) {
        this.logger.warn(`ignoring a malformed stats report on ${this.subject} (logged once)`);
      }
      return false;
    }
    if (report.quotas.length > this.bounds.quotasPerReport) {
      return this.refuse(
        `${report.quotas.length} quotas, more than ${this.bounds.quotasPerReport}`,
      );
    }
    // A flood of reports sweeps the silent at most every 100 ms, or when the table is full.
    if (now - this.sweptAt >= 100 || this.replicas.size >= this.bounds.replicas) {
      this.forgetSilent(now);
    }
    const previous = this.replicas.get(report.replica);
    if (previous === undefined && this.replicas.size >= this.bounds.replicas) {
      return this.refuse(
        `replica ${report.replica}: ${this.bounds.replicas} replicas heard already`,
      );
    }
    const bytes = this.bytesHeld - (previous?.bytes ?? 0) + data.byteLength;
    if (bytes > this.bounds.bytes) {
      return this.refuse(
        `replica ${report.replica}: reports held would exceed ${this.bounds.bytes} bytes`,
      );
    }
    this.bytesHeld = bytes;
    this.replicas.set(report.replica, { heardAt: now, report, bytes: data.byteLength });
    return true;
  }

  private refuse(reason: string): false {
    this.refused++;
    refusedLog.write(() => ({ msg: `stats report refused: ${reason}` }));
    return false;
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
    /** Per quota, the replicas' lists of refused keys, merged once all are read. */
    const refused = new Map<string, (readonly RefusedKey[])[]>();
    for (const { report } of this.replicas.values()) {
      for (const count of report.quotas) {
        if (count.topRefused !== undefined) {
          const lists = refused.get(count.quota);
          if (lists === undefined) refused.set(count.quota, [count.topRefused]);
          else lists.push(count.topRefused);
        }
        const sum = sums.get(count.quota);
        if (sum === undefined) {
          sums.set(count.quota, {
            quota: count.quota,
            approved: count.approved,
            denied: count.denied,
            queued: count.queued,
            activeKeys: count.activeKeys,
            ...(count.scope !== undefined && { scope: count.scope }),
            topRefused: [],
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
    for (const [quota, lists] of refused) sums.get(quota)!.topRefused = mergeTopRefused(lists);
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
        if (error === null) this.accept(msg.data, msg.headers);
      },
    });
    this.subscription = { nc, sub };
  }

  private forgetSilent(now: number): void {
    this.sweptAt = now;
    for (const [replica, state] of this.replicas) {
      if (now - state.heardAt < REPLICA_SILENT_AFTER_MS) continue;
      this.replicas.delete(replica);
      this.bytesHeld -= state.bytes;
    }
  }
}

/** The scope two replicas' reports give a quota together: local wins, it is the weaker promise. */
function weakerScope(a: Scope | undefined, b: Scope | undefined): Scope | undefined {
  if (a === 'local' || b === 'local') return 'local';
  return a ?? b;
}
