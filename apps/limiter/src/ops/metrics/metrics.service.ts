import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { ControlService } from '../../control/control.service';
import { QuotaLayersService } from '../../control/quota-layers.service';
import { LimiterService } from '../../engine-host/limiter.service';
import { ConfigLoaderService } from '../config/config-loader.service';
import { PersistenceService } from '../persistence/persistence.service';
import { DecisionMetrics } from './decision-metrics';

/**
 * Decisions take microseconds; waiters take up to their maxWaitMs (30 s by default). The buckets
 * resolve both ends.
 */
export const DECISION_SECONDS_BUCKETS = [
  0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.05, 0.1,
  0.5, 1, 5, 30, 60,
];

/**
 * GET /metrics (Prometheus text). One registry per app, so in-process apps never collide.
 * Per-decision series are fed by an observer on the engine host; gauges are read at scrape time.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  constructor(
    limiter: LimiterService,
    config: ConfigLoaderService,
    persistence: PersistenceService,
    layers: QuotaLayersService,
    control: ControlService,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    const decisions = new DecisionMetrics(DECISION_SECONDS_BUCKETS);
    limiter.observe(decisions);
    // Duck-typed metrics: the registry reads them at scrape time (see DecisionMetrics).
    this.registry.registerMetric(
      decisions.counter(
        'ratelimit_decisions_total',
        'Answered acquires by quota and code',
      ) as never,
    );
    this.registry.registerMetric(
      decisions.histogram(
        'ratelimit_decision_duration_seconds',
        'From arrival to answer, by quota (waiters included)',
      ) as never,
    );

    new Gauge({
      name: 'ratelimit_queue_depth',
      help: 'Requests waiting in the queue, by quota',
      labelNames: ['quota'] as const,
      registers,
      collect() {
        this.reset();
        for (const c of limiter.counters()) this.labels(c.quota).set(c.queued);
      },
    });
    new Gauge({
      name: 'ratelimit_active_keys',
      help: 'Keys with state in memory, by quota',
      labelNames: ['quota'] as const,
      registers,
      collect() {
        this.reset();
        for (const c of limiter.counters()) this.labels(c.quota).set(c.activeKeys);
      },
    });
    new Gauge({
      name: 'ratelimit_quotas',
      help: 'Quotas in force',
      registers,
      collect() {
        this.set(limiter.quotas().length);
      },
    });
    new Counter({
      name: 'ratelimit_config_reloads_total',
      help: 'CONFIG_FILE versions put in force (applied) or refused',
      labelNames: ['result'] as const,
      registers,
      collect() {
        this.reset();
        this.labels('applied').inc(config.stats.applied);
        this.labels('refused').inc(config.stats.refused);
      },
    });
    new Gauge({
      name: 'ratelimit_config_valid',
      help: '1 when the config file on disk is the one in force, 0 while it is refused',
      registers,
      collect() {
        this.set(config.stats.valid ? 1 : 0);
      },
    });
    new Counter({
      name: 'ratelimit_control_sets_total',
      help: 'Admin control sets put in force (applied) or refused by the engine',
      labelNames: ['result'] as const,
      registers,
      collect() {
        this.reset();
        this.labels('applied').inc(layers.stats.applied);
        this.labels('refused').inc(layers.stats.refused);
      },
    });
    new Counter({
      name: 'ratelimit_control_refused_total',
      help: 'Control entries, requests and stats reports refused for their signature or age, never applied',
      labelNames: ['kind', 'cause'] as const,
      registers,
      collect() {
        this.reset();
        for (const t of control.refusals.totals) this.labels(t.kind, t.reason).inc(t.count);
      },
    });
    new Counter({
      name: 'ratelimit_nats_reply_refused_total',
      help: 'NATS requests refused, unserved, for asking their answer on a $ subject, a subject of the service or an app inbox',
      registers,
      collect() {
        this.reset();
        this.inc(control.refusedReplies);
      },
    });
    new Counter({
      name: 'ratelimit_persistence_writes_total',
      help: 'Usage snapshots written to DATA_DIR (ok) or failed',
      labelNames: ['result'] as const,
      registers,
      collect() {
        this.reset();
        this.labels('ok').inc(persistence.stats.writes);
        this.labels('failed').inc(persistence.stats.failures);
      },
    });
    new Gauge({
      name: 'ratelimit_queue_group_replicas',
      help: 'Limiter replicas of this NATS queue group heard from in the last 3 s, this one included',
      registers,
      collect() {
        this.set(control.queueGroupReplicas());
      },
    });
    new Counter({
      name: 'ratelimit_persistence_rows_total',
      help: 'Keys written to DATA_DIR by saves (written), stored keys deleted (deleted), and stored keys left out of a restore as impossible (unreadable)',
      labelNames: ['op'] as const,
      registers,
      collect() {
        this.reset();
        this.labels('written').inc(persistence.stats.rowsWritten);
        this.labels('deleted').inc(persistence.stats.rowsDeleted);
        this.labels('unreadable').inc(persistence.stats.rowsUnreadable);
      },
    });
    new Gauge({
      name: 'ratelimit_persistence_last_write_duration_seconds',
      help: 'How long the last save took, from its first changed key collected to its last written',
      registers,
      collect() {
        this.set(persistence.stats.lastWriteMs / 1000);
      },
    });
    const cluster = limiter.cluster;
    new Gauge({
      name: 'ratelimit_store_degraded',
      help: '1 while a Redis of cluster scope is unreachable (onStoreFailure decides), else 0',
      registers,
      collect() {
        this.set(cluster?.degraded === true ? 1 : 0);
      },
    });
    new Gauge({
      name: 'ratelimit_store_circuit_open',
      help: "1 while a Redis node's circuit is open (its keys answered by onStoreFailure at once)",
      labelNames: ['node'] as const,
      registers,
      collect() {
        this.reset();
        for (const c of cluster?.circuits() ?? []) this.labels(c.node).set(c.open ? 1 : 0);
      },
    });
    new Counter({
      name: 'ratelimit_store_failures_total',
      help: 'Cluster-scope calls Redis could not answer, or not asked (circuit open): onStoreFailure answered',
      registers,
      collect() {
        this.reset();
        this.inc(cluster?.failures ?? 0);
      },
    });
    const leases = cluster?.leases;
    new Gauge({
      name: 'ratelimit_lease_keys',
      help: 'Cluster-scope (quota, key)s this replica decides from a capacity lease',
      registers,
      collect() {
        this.set(leases?.keys ?? 0);
      },
    });
    new Counter({
      name: 'ratelimit_lease_decisions_total',
      help: 'Cluster-scope decisions made from a capacity lease, without a Redis call',
      labelNames: ['result'] as const,
      registers,
      collect() {
        this.reset();
        this.labels('admitted').inc(leases?.counters.admitted ?? 0);
        this.labels('refused').inc(leases?.counters.refused ?? 0);
      },
    });
    new Counter({
      name: 'ratelimit_lease_grants_total',
      help: 'Capacity leases granted by Redis to this replica',
      registers,
      collect() {
        this.reset();
        this.inc(leases?.counters.grants ?? 0);
      },
    });
    new Counter({
      name: 'ratelimit_lease_units_total',
      help: 'Capacity units leased (granted), and given back unspent (returned)',
      labelNames: ['outcome'] as const,
      registers,
      collect() {
        this.reset();
        this.labels('granted').inc(leases?.counters.granted ?? 0);
        this.labels('returned').inc(leases?.counters.returned ?? 0);
      },
    });
    new Gauge({
      name: 'ratelimit_persistence_last_write_timestamp_seconds',
      help: 'When usage was last written to DATA_DIR (0: never)',
      registers,
      collect() {
        this.set(persistence.stats.lastWriteAt / 1000);
      },
    });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
