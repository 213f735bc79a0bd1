import type { DecisionCode } from '@app/engine';
import type { DecisionObserver } from '../../engine-host/limiter.service';

/** Quota names of UNKNOWN_QUOTA answers come from clients: one label for all, not one each. */
export const UNKNOWN_QUOTA_LABEL = '(unknown)';
/** Beyond this many quota labels (configs are far smaller), the rest share one. */
export const MAX_QUOTA_LABELS = 1000;
export const OTHER_QUOTA_LABEL = '(other)';

interface QuotaSeries {
  readonly label: string;
  readonly codes: Map<DecisionCode, number>;
  /** Non-cumulative counts per bucket; the last one is +Inf. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

interface SampleValue {
  readonly metricName?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

interface Scrape {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  readonly values: SampleValue[];
}

/** What a prom-client Registry needs of a metric: it calls `get()` at scrape time. */
export interface ScrapedMetric {
  readonly name: string;
  readonly help: string;
  get(): Promise<Scrape>;
}

/**
 * Counts every answered acquire. It runs on the hot path (every decision, 100 per NATS batch), so
 * it only touches plain numbers: prom-client's labelled children hash their labels on every call.
 * The counts become Prometheus series when scraped, through the two metrics this class exposes.
 */
export class DecisionMetrics implements DecisionObserver {
  private readonly byQuota = new Map<string, QuotaSeries>();
  private other: QuotaSeries | undefined;

  constructor(private readonly bounds: readonly number[]) {}

  decided(quota: string, code: DecisionCode, seconds: number): void {
    const name = code === 'UNKNOWN_QUOTA' ? UNKNOWN_QUOTA_LABEL : quota;
    const s = this.byQuota.get(name) ?? this.seriesOf(name);
    s.codes.set(code, (s.codes.get(code) ?? 0) + 1);
    let b = 0;
    while (b < this.bounds.length && seconds > this.bounds[b]!) b++;
    s.buckets[b]! += 1;
    s.sum += seconds;
    s.count++;
  }

  /** `name{quota, code}`: answered acquires. */
  counter(name: string, help: string): ScrapedMetric {
    return this.metric(name, help, 'counter', () => {
      const values: SampleValue[] = [];
      for (const s of this.series()) {
        for (const [code, value] of s.codes)
          values.push({ labels: { quota: s.label, code }, value });
      }
      return values;
    });
  }

  /** `name_bucket{le, quota}`, `name_sum{quota}`, `name_count{quota}`. */
  histogram(name: string, help: string): ScrapedMetric {
    return this.metric(name, help, 'histogram', () => {
      const values: SampleValue[] = [];
      for (const s of this.series()) {
        let cumulative = 0;
        for (let b = 0; b <= this.bounds.length; b++) {
          cumulative += s.buckets[b]!;
          const le = b < this.bounds.length ? String(this.bounds[b]) : '+Inf';
          values.push({
            metricName: `${name}_bucket`,
            labels: { le, quota: s.label },
            value: cumulative,
          });
        }
        values.push({ metricName: `${name}_sum`, labels: { quota: s.label }, value: s.sum });
        values.push({ metricName: `${name}_count`, labels: { quota: s.label }, value: s.count });
      }
      return values;
    });
  }

  private metric(
    name: string,
    help: string,
    type: Scrape['type'],
    values: () => SampleValue[],
  ): ScrapedMetric {
    return {
      name,
      help,
      get: () => Promise.resolve({ name, help, type, aggregator: 'sum', values: values() }),
    };
  }

  private *series(): Iterable<QuotaSeries> {
    yield* this.byQuota.values();
    if (this.other !== undefined) yield this.other;
  }

  private seriesOf(name: string): QuotaSeries {
    if (this.byQuota.size >= MAX_QUOTA_LABELS) {
      return (this.other ??= this.newSeries(OTHER_QUOTA_LABEL));
    }
    const series = this.newSeries(name);
    this.byQuota.set(name, series);
    return series;
  }

  private newSeries(label: string): QuotaSeries {
    return {
      label,
      codes: new Map(),
      buckets: new Float64Array(this.bounds.length + 1),
      sum: 0,
      count: 0,
    };
  }
}
