/**
 * The Live page's main-thread work per stats update, without the drawing: LiveHistory.ingest, the
 * choice of panels, and the chart columns of the panels shown (what the page hands to uPlot).
 * Bounded as the page runs it (MAX_QUOTAS followed, MAX_PANELS drawn), or without the bounds.
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import {
  HISTORY_WINDOW_MS,
  LiveHistory,
  MAX_QUOTAS,
  type StatsUpdateInput,
} from '../../apps/console/src/live/history';
import { MAX_PANELS, pickPanels } from '../../apps/console/src/live/pick-panels';
import { ascending } from './quantiles';

/** 10 minutes of history at one update a second, filled before anything is timed. */
export const FILL_UPDATES = HISTORY_WINDOW_MS / 1000;
const UPDATE_INTERVAL_MS = 1000;
const START_MS = Date.UTC(2026, 0, 1);
/** The unbounded peer takes seconds per update at 5 000 quotas: fewer are timed, at least 5. */
const TIME_BOX_MS = 20_000;
const MIN_UPDATES = 5;

export interface LiveCost {
  /** Milliseconds per update, ascending (fewer than asked when the time box ran out). */
  readonly perUpdateMs: number[];
  /** Heap held by the history (columns of the last update included), after a full GC. */
  readonly heapBytes: number;
  readonly followed: number;
  readonly drawn: number;
}

// A full GC before each heap reading; the script runs without --expose-gc.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function heapUsed(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/**
 * Update `tick` reporting `quotas` quotas: counters that grow at rates that differ per quota and
 * shift with time, so the busiest quotas (the panels drawn) change from one update to the next.
 */
function statsUpdate(tick: number, quotas: number): StatsUpdateInput {
  return {
    at: new Date(START_MS + tick * UPDATE_INTERVAL_MS).toISOString(),
    replicas: 2,
    quotas: Array.from({ length: quotas }, (_, i) => {
      const perSecond = (i * 37 + tick) % 101;
      return {
        quota: `quota-${String(i).padStart(5, '0')}`,
        approved: tick * perSecond,
        denied: tick * (i % 7),
        activeKeys: (i + tick) % 50,
        queued: (i + tick) % 3,
      };
    }),
  };
}

/** What the page does with one update, up to handing columns to the charts. */
function onUpdate(history: LiveHistory, update: StatsUpdateInput, maxPanels: number): number {
  history.ingest(update);
  const { shown } = pickPanels(history.quotas(), '', maxPanels);
  for (const quota of shown) {
    quota.rateColumns();
    quota.gaugeColumns();
  }
  return shown.length;
}

export function liveCost(quotas: number, bounded: boolean, measuredUpdates: number): LiveCost {
  const maxQuotas = bounded ? MAX_QUOTAS : Infinity;
  const maxPanels = bounded ? MAX_PANELS : Infinity;
  const before = heapUsed();
  const history = new LiveHistory(HISTORY_WINDOW_MS, maxQuotas);
  for (let tick = 0; tick < FILL_UPDATES; tick++) history.ingest(statsUpdate(tick, quotas));

  const perUpdateMs: number[] = [];
  let drawn = 0;
  const boxStarted = performance.now();
  for (let tick = FILL_UPDATES; tick < FILL_UPDATES + measuredUpdates; tick++) {
    const outOfTime = performance.now() - boxStarted > TIME_BOX_MS;
    if (outOfTime && perUpdateMs.length >= MIN_UPDATES) break;
    const update = statsUpdate(tick, quotas); // what graphql-ws hands the page: not timed
    const started = performance.now();
    drawn = onUpdate(history, update, maxPanels);
    perUpdateMs.push(performance.now() - started);
  }
  const heapBytes = heapUsed() - before;
  const followed = history.quotas().length; // keeps the history alive through the reading
  return { perUpdateMs: ascending(perUpdateMs), heapBytes, followed, drawn };
}
