import { useId } from 'preact/hooks';
import type { QuotaHistory } from '../../live/history';
import { count, rate } from '../../ui/format';
import { Chart, type ChartSeries } from './chart';

// Module constants: the chart is re-created only when these change, which they never do.
const RATE_SERIES: readonly [ChartSeries, ChartSeries] = [
  { label: 'Admitted/s', colour: '--ok', format: rate },
  { label: 'Refused/s', colour: '--bad', format: rate },
];
const GAUGE_SERIES: readonly [ChartSeries, ChartSeries] = [
  { label: 'Keys', colour: '--accent', format: count },
  { label: 'Waiting', colour: '--warn', format: count },
];

function figure(value: number | null | undefined, format: (n: number) => string): string {
  return value === null || value === undefined ? '—' : format(value);
}

/** One quota: its latest figures and its last 10 minutes. */
export function QuotaPanel(props: { quota: QuotaHistory }) {
  const headingId = useId();
  const { quota } = props;
  const latest = quota.latest();
  const reported = latest !== undefined && latest.keys !== null;
  return (
    <section
      class="panel live-quota"
      aria-labelledby={headingId}
      data-samples={String(quota.samples.size)}
    >
      <h2 id={headingId}>{quota.name}</h2>
      <dl class="live-figures">
        <div>
          <dt>Admitted/s</dt>
          <dd>{figure(latest?.admitted, rate)}</dd>
        </div>
        <div>
          <dt>Refused/s</dt>
          <dd>{figure(latest?.refused, rate)}</dd>
        </div>
        <div>
          <dt>Keys</dt>
          <dd>{figure(latest?.keys, count)}</dd>
        </div>
        <div>
          <dt>Waiting</dt>
          <dd>{figure(latest?.waiting, count)}</dd>
        </div>
      </dl>
      {!reported && <p class="muted live-note">Not in the last update.</p>}
      <Chart
        label={`${quota.name}: admitted and refused per second, last 10 minutes`}
        series={RATE_SERIES}
        data={quota.rateColumns()}
        height={150}
      />
      <Chart
        label={`${quota.name}: keys held and requests waiting, last 10 minutes`}
        series={GAUGE_SERIES}
        data={quota.gaugeColumns()}
        height={110}
      />
    </section>
  );
}
