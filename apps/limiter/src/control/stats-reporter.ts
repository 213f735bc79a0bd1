import {
  STATS_REPORT_HEADERS,
  type QuotaCount,
  type RefusedKey,
  type Scope,
  type StatsReport,
} from '@app/contracts';
import type { QuotaCounters } from '@app/engine';
import { headers, type MsgHdrs, type NatsConnection } from 'nats';
import { encodeJson } from '../nats/nats-codec';

/**
 * A replica's counters as the admin sums them, with the scope it decides each quota in and the
 * keys it refused most since the previous report (quotas not in `counters` are left out).
 */
export function statsReport(
  replica: string,
  at: number,
  counters: readonly QuotaCounters[],
  scopeOf: (quota: string) => Scope,
  refused: ReadonlyMap<string, readonly RefusedKey[]> = new Map(),
): StatsReport {
  const quotas: QuotaCount[] = counters.map((c) => {
    const top = refused.get(c.quota);
    return {
      quota: c.quota,
      approved: c.approved,
      denied: c.denied,
      queued: c.queued,
      activeKeys: c.activeKeys,
      scope: scopeOf(c.quota),
      ...(top !== undefined && top.length > 0 && { topRefused: top }),
    };
  });
  return { replica, at, quotas };
}

/** The headers every report of this replica carries (STATS_REPORT_HEADERS). */
export function statsReportHeaders(replica: string, queueGroup: string): MsgHdrs {
  const h = headers();
  h.set(STATS_REPORT_HEADERS.replica, replica);
  h.set(STATS_REPORT_HEADERS.queueGroup, queueGroup);
  return h;
}

/**
 * Publishes this replica's StatsReport every `everyMs` on `subject`, with `reportHeaders`. While NATS is down nothing
 * is published: nats.js would buffer the reports and deliver stale counts in a burst later, and
 * the counters are cumulative, so the next report after the reconnect says everything.
 */
export class StatsReporter {
  private nc: NatsConnection | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly subject: string,
    private readonly everyMs: number,
    private readonly report: () => StatsReport,
    private readonly reportHeaders: MsgHdrs,
    private readonly connected: () => boolean,
    private readonly onError: (error: unknown) => void,
    /** Signs each report into its headers (REPORT_SEED), or leaves them as they are. */
    private readonly sign: (body: Uint8Array, headers: MsgHdrs) => void = () => undefined,
  ) {}

  attach(nc: NatsConnection): void {
    this.nc = nc;
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.publish(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.nc = undefined;
  }

  private publish(): void {
    const nc = this.nc;
    if (nc === undefined || nc.isClosed() || nc.isDraining() || !this.connected()) return;
    try {
      const body = encodeJson(this.report());
      this.sign(body, this.reportHeaders);
      nc.publish(this.subject, body, { headers: this.reportHeaders });
    } catch (error) {
      this.onError(error);
    }
  }
}
