import {
  controlNames,
  goccDefaultQuota,
  STATS_REPORT_EVERY_MS,
  STATS_REPORT_HEADERS,
  type ControlNames,
  type ControlSet,
} from '@app/contracts';
import { systemClock, type Clock } from '@app/engine';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from 'nats';
import { randomUUID } from 'node:crypto';
import { CLOCK, LimiterService } from '../engine-host/limiter.service';
import { ReadinessService } from '../engine-host/readiness.service';
import { NatsResponder } from '../nats/nats-responder';
import { ReplyGuard } from '../nats/reply-guard';
import { NatsTransport } from '../nats/nats-transport.service';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';
import { limiterSigningWarning } from '../settings/limiter-signing';
import { ControlEntries } from './control-entries';
import { ControlRefusals } from './control-refusals';
import { ControlRequests } from './control-requests';
import { ControlSigning } from './control-signing';
import { ControlStore } from './control-store';
import { ControlWatcher } from './control-watcher';
import { LocalScopeWarning, QueueGroupPeers, replicatedLocalQuotas } from './local-scope-warning';
import { QuotaLayersService } from './quota-layers.service';
import { statsReport, statsReportHeaders, StatsReporter } from './stats-reporter';

/**
 * The limiter's side of the admin control plane, on the limiter's own NATS connection:
 * - the admin's KV bucket watched, its set composed over the config (ControlWatcher, QuotaLayers);
 * - the last set applied kept in SQLite under DATA_DIR and put in force at start, before NATS
 *   answers, so a limiter restarting while NATS or the admin is down keeps the admin's quotas;
 * - a StatsReport every STATS_REPORT_EVERY_MS, and the other replicas' reports read to warn once
 *   when replicas of this queue group share local quotas (each admits up to their limits);
 * - keyStats and resetKey answered by every replica (plain subscriptions, no queue group).
 * With control keys, what is not signed by the right key is refused and counted (ControlSigning).
 * Without NATS (NATS_URL empty) there is no control plane: the config alone is in force.
 */
@Injectable()
export class ControlService {
  private readonly log = new Logger('Control');
  /** Unique per process run: a restarted limiter is a new replica. */
  readonly replica = randomUUID();
  private readonly names: ControlNames;
  private readonly requests: ControlRequests;
  private readonly responder: NatsResponder;
  private store: ControlStore | undefined;
  private watcher: ControlWatcher | undefined;
  private reporter: StatsReporter | undefined;
  private subscriptions: Subscription[] = [];
  private lastSaveFailure = '';
  /** The control set this process last wrote to the store. */
  private lastSaved: ControlSet | undefined;
  private readonly peers: QueueGroupPeers;
  private readonly localScope = new LocalScopeWarning();
  /** Control refused for its signature or age, by kind and reason (/metrics). */
  readonly refusals = new ControlRefusals();
  private readonly signing: ControlSigning;

  constructor(
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
    private readonly limiter: LimiterService,
    private readonly layers: QuotaLayersService,
    private readonly readiness: ReadinessService,
    private readonly transport: NatsTransport,
    @Optional() @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {
    this.names = controlNames(settings.subjectPrefix);
    this.signing = new ControlSigning(settings.signing, this.names, this.refusals);
    this.requests = new ControlRequests(this.replica, limiter, (operation, data, headers) =>
      this.signing.refusesRequest(this.names[operation], data, headers, this.clock.now()),
    );
    // The admin asks on its own inboxes: only `$` subjects and the service's own are refused.
    this.responder = new NatsResponder(
      new ReplyGuard(settings.subjectPrefix, []),
      this.requests.failureReply,
    );
    this.peers = new QueueGroupPeers(this.replica, settings.queueGroup);
  }

  /** NATS requests, control and callers', refused for the subject they asked their answer on. */
  get refusedReplies(): number {
    return this.responder.guard.refused + this.transport.refusedReplies;
  }

  /** Replicas of this NATS queue group heard from in the last 3 s, this one included (metrics). */
  queueGroupReplicas(): number {
    return this.peers.replicas(this.clock.now());
  }

  /** At start, before the config file: the stored set goes in force, then NATS is followed. */
  start(): void {
    if (this.settings.nats === undefined) return;
    const warning = limiterSigningWarning(this.settings.signing);
    if (warning !== undefined) this.log.warn(warning);
    this.store = ControlStore.open(this.settings.dataDir, this.log);
    const stored = this.loadStored();
    if (stored !== undefined) this.layers.setControl(stored);
    this.readiness.control = this.layers.controlInForce !== undefined ? 'cached' : 'none';
    this.layers.onApplied(() => this.save());
    this.layers.onApplied(() => this.findLocalQuotas());
    this.findLocalQuotas();

    this.watcher = new ControlWatcher(
      this.names.bucket,
      ControlEntries.from(stored, this.signing.entryOptions()),
      {
        set: (set) => this.layers.setControl(set),
        synced: (synced) => {
          const known = this.layers.controlInForce !== undefined;
          this.readiness.control = synced ? 'synced' : known ? 'cached' : 'none';
        },
      },
      this.log,
    );
    this.reporter = new StatsReporter(
      this.names.statsReport,
      STATS_REPORT_EVERY_MS,
      () =>
        statsReport(
          this.replica,
          this.clock.now(),
          this.limiter.counters(),
          (quota) => this.limiter.scopeOf(quota),
          this.limiter.refusedKeys.take(),
        ),
      statsReportHeaders(this.replica, this.settings.queueGroup),
      () => this.readiness.nats === 'subscribed',
      (error) => this.log.warn(`stats report not published: ${String(error)}`),
      (body, headers) => this.signing.signReport(body, headers, this.clock.now()),
    );
    this.transport.onConnection((nc) => this.attach(nc));
  }

  /** Shutdown: no more reports, answers or changes; the stored set is complete already. */
  async stop(): Promise<void> {
    this.reporter?.stop();
    for (const sub of this.subscriptions) {
      try {
        sub.unsubscribe();
      } catch {
        // closed connection: nothing to unsubscribe from
      }
    }
    this.subscriptions = [];
    await this.watcher?.stop();
    await this.responder.settled(2_000);
    this.store?.close();
    this.store = undefined;
  }

  private attach(nc: NatsConnection): void {
    // Subscriptions survive reconnects (nats.js resends them); a fresh connection needs new ones.
    this.subscriptions = [
      nc.subscribe(this.names.keyStats, {
        callback: this.responder.callback((data, msg) => this.requests.keyStats(data, msg.headers)),
      }),
      nc.subscribe(this.names.resetKey, {
        callback: this.responder.callback((data, msg) => this.requests.resetKey(data, msg.headers)),
      }),
      nc.subscribe(this.names.statsReport, {
        callback: (error, msg) => {
          if (error === null) this.heard(msg);
        },
      }),
    ];
    this.watcher?.attach(nc);
    this.reporter?.attach(nc);
  }

  /**
   * A replica's StatsReport (this one's too), by its headers only: the replicas of the queue
   * group, then the warning. The body is never parsed (it grows with the quotas), only verified
   * when report keys are set.
   */
  private heard(msg: Msg): void {
    const now = this.clock.now();
    const h = msg.headers;
    const replica = h?.get(STATS_REPORT_HEADERS.replica);
    // Its own report counts as it is (without REPORT_SEED it is unsigned); one that only claims
    // to be it adds no replica.
    if (replica !== this.replica && !this.signing.acceptsReport(msg.data, h, now)) return;
    this.peers.hear(replica, h?.get(STATS_REPORT_HEADERS.queueGroup), now);
    const warning = this.localScope.check(this.peers.peers(now), this.settings.queueGroup);
    if (warning !== undefined) this.log.warn(warning);
  }

  /** Once per quota set: the local quotas that replicas of one queue group would multiply. */
  private findLocalQuotas(): void {
    this.localScope.setQuotas(
      replicatedLocalQuotas(
        this.limiter.quotas(),
        (name) => this.limiter.scopeOf(name),
        goccDefaultQuota(this.settings.gocc),
      ),
    );
  }

  private loadStored(): ControlSet | undefined {
    const store = this.store;
    if (store === undefined) return undefined;
    try {
      const stored = store.load(this.log);
      if (stored === undefined) return undefined;
      const at =
        stored.savedAt === undefined ? 'an unknown time' : new Date(stored.savedAt).toISOString();
      this.log.log(`control set stored at ${at} in force until NATS answers (${store.path})`);
      return stored.set;
    } catch (error) {
      this.log.error(
        `cannot read ${store.path} (${String(error)}): starting without the stored set`,
      );
      return undefined;
    }
  }

  private save(): void {
    const set = this.layers.controlInForce;
    const store = this.store;
    // A config reload leaves the control set as it was: nothing to encode or write.
    if (set === undefined || store === undefined || set === this.lastSaved) return;
    try {
      store.save(set, this.clock.now());
      this.lastSaved = set;
      this.lastSaveFailure = '';
    } catch (error) {
      const message = String(error);
      // Once per distinct problem: a full disk would otherwise log every change.
      if (message !== this.lastSaveFailure)
        this.log.error(`cannot write ${store.path}: ${message}`);
      this.lastSaveFailure = message;
    }
  }
}
