import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Columns } from '../../live/history';
import { clockTick } from '../../live/time-axis';

export interface ChartSeries {
  readonly label: string;
  /** A colour variable of styles.css: `--ok`. */
  readonly colour: string;
  readonly format: (value: number) => string;
}

/** Reads a styles.css colour: the canvas cannot use CSS variables. */
function cssColour(variable: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(variable).trim() || 'gray';
}

/** The time axis spans at least this, so that the first seconds do not get sub-second ticks. */
const MIN_SPAN_S = 60;

function options(
  series: readonly [ChartSeries, ChartSeries],
  width: number,
  height: number,
): uPlot.Options {
  const muted = cssColour('--muted');
  const line = cssColour('--line');
  const format = series[0].format;
  const axis = { stroke: muted, grid: { stroke: line, width: 1 }, ticks: { stroke: line } };
  return {
    width,
    height,
    // Zooming would be undone by the next update, a second later.
    cursor: { drag: { x: false, y: false } },
    // Labels only: the figures above the charts give the latest values.
    legend: { live: false },
    scales: {
      x: { time: true, range: (_u, min, max) => [Math.min(min, max - MIN_SPAN_S), max] },
      // Counts and rates start at zero; an empty or flat chart still gets a scale.
      y: { range: (_u, _min, max) => [0, max !== null && max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      {
        ...axis,
        values: (_u, splits, _axis, _space, step) => splits.map((s) => clockTick(s, step)),
      },
      { ...axis, size: 48, values: (_u, splits) => splits.map(format) },
    ],
    series: [
      { label: 'Time' },
      ...series.map((s) => ({
        label: s.label,
        stroke: cssColour(s.colour),
        width: 1.5,
        value: (_u: uPlot, v: number | null) => (v === null ? '—' : s.format(v)),
      })),
    ],
  };
}

/**
 * A uPlot time chart of two series, as wide as its container: created once, given each update
 * with setData (one redraw per update), resized by a ResizeObserver, destroyed on unmount.
 */
export function Chart(props: {
  /** What a screen reader hears for the picture; the figures above it give the values. */
  label: string;
  series: readonly [ChartSeries, ChartSeries];
  data: Columns;
  height: number;
}) {
  const container = useRef<HTMLDivElement>(null);
  const plot = useRef<{ chart: uPlot; data: Columns } | undefined>(undefined);
  const { series, height } = props;
  // The latest data for creating the chart, without making new data re-create it.
  const propsData = useRef(props.data);
  propsData.current = props.data;

  useEffect(() => {
    const element = container.current;
    if (element === null) return undefined;
    const data = propsData.current;
    const chart = new uPlot(options(series, element.clientWidth, height), data, element);
    plot.current = { chart, data };
    const resized = new ResizeObserver((entries) => {
      const width = Math.floor(entries[0]?.contentRect.width ?? 0);
      if (width > 0 && width !== chart.width) chart.setSize({ width, height });
    });
    resized.observe(element);
    return () => {
      resized.disconnect();
      chart.destroy();
      plot.current = undefined;
    };
  }, [series, height]);

  useEffect(() => {
    const current = plot.current;
    if (current === undefined || current.data === props.data) return;
    current.chart.setData(props.data);
    current.data = props.data;
  }, [props.data]);

  return <div class="live-chart" ref={container} role="img" aria-label={props.label} />;
}
