import { useId } from 'preact/hooks';
import type { QuotaHistory, RefusedKeyInput } from '../../live/history';
import { keysHref } from '../../routes';
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

/** The keys the quota refused most lately, each a link to its counts on the Keys page. */
function TopRefused(props: { quota: string; keys: readonly RefusedKeyInput[] }) {
  const headingId = useId();
  return (
    <div class="live-refused">
      <h3 id={headingId}>Refused most</h3>
      <ol aria-labelledby={headingId}>
        {props.keys.map((r) => (
          <li key={r.key}>
            <a href={keysHref(r.key, props.quota)}>{r.key}</a>{' '}
            <span
              class="muted"
              title={
                r.error > 0
                  ? `refused ${r.count - r.error} to ${r.count} times in the limiters' last report`
                  : `refused ${r.count} times in the limiters' last report`
              }
            >
              {count(r.count)}
              {r.error > 0 && ` (±${count(r.error)})`}
            </span>
          </li>
        ))}
      </ol>
    </div>
  );
}

/** One quota: its latest figures, the keys it refuses most, and its last 10 minutes. */
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
      {quota.topRefused.length > 0 && <TopRefused quota={quota.name} keys={quota.topRefused} />}
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
