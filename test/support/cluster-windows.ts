/**
 * Admissions of a cluster load (cluster-load.ts) counted per window of Redis time, for the lease
 * tests (what must always hold) and bench:cluster (utilization). An admission's instant is known
 * only within [sentAt, receivedAt]: a count that must stay under a limit counts what certainly
 * fell in the window, one that must reach a share of it counts what possibly did, and a figure
 * counts each admission at the middle of its interval.
 */
import type { LimiterProcess } from './limiter-process';
import { SLACK_MS, type Sample } from './cluster-load';

export const admitted = (samples: readonly Sample[]): Sample[] =>
  samples.filter((s) => s.reply?.['allowed'] === true);

/** The start of the epoch-aligned window of `windowMs` that holds `t`. */
export const windowStart = (t: number, windowMs: number): number =>
  Math.floor(t / windowMs) * windowMs;

/** One window of Redis time and what was admitted in it, as far as the client knows. */
export interface WindowCount {
  readonly start: number;
  /** Admissions whose whole [sentAt, receivedAt] (widened by SLACK_MS) lies inside. */
  readonly certain: number;
  /** Admissions whose interval meets the window at all. */
  readonly possible: number;
  /** Admissions whose interval's middle lies inside: the estimate a figure uses. */
  readonly midway: number;
  /** Requests sent inside it (the offered load). */
  readonly offered: number;
  /** Certain admissions per replica asked (NATS: `nats`). */
  readonly by: Record<string, number>;
}

/** Counts per epoch-aligned window of `windowMs` of Redis time (`offset` + the client clock). */
export function perWindow(
  samples: readonly Sample[],
  offset: number,
  windowMs: number,
  from: number,
  to: number,
): WindowCount[] {
  const out: WindowCount[] = [];
  for (let start = from; start < to; start += windowMs) {
    const end = start + windowMs;
    let certain = 0;
    let possible = 0;
    let midway = 0;
    let offered = 0;
    const by: Record<string, number> = {};
    for (const s of samples) {
      const a = s.sentAt + offset - SLACK_MS;
      const b = s.receivedAt + offset + SLACK_MS;
      const sent = s.sentAt + offset;
      if (sent >= start && sent < end) offered++;
      if (s.reply?.['allowed'] !== true) continue;
      if (b > start && a < end) possible++;
      const middle = (a + b) / 2;
      if (middle >= start && middle < end) midway++;
      if (a >= start && b <= end) {
        certain++;
        const who = s.replica === undefined ? 'nats' : `r${s.replica}`;
        by[who] = (by[who] ?? 0) + 1;
      }
    }
    out.push({ start, certain, possible, midway, offered, by });
  }
  return out;
}

/**
 * A token bucket's own bound, from a fresh (full) key: by any instant `until`, at most
 * burst + rate x (until - first request) admitted. For each of `ends` (Redis time), what was
 * certainly admitted by then (received by then) beside that bound.
 */
export function bucketBound(
  samples: readonly Sample[],
  offset: number,
  limit: number,
  windowMs: number,
  ends: readonly number[],
): { until: number; admitted: number; most: number }[] {
  const ok = admitted(samples);
  const from = Math.min(...samples.map((s) => s.sentAt)) + offset - SLACK_MS;
  return ends.map((until) => ({
    until,
    admitted: ok.filter((s) => s.receivedAt + offset + SLACK_MS <= until).length,
    most: limit + Math.floor((limit * (until - from)) / windowMs),
  }));
}

/** The sum of a Prometheus family's samples (all label sets) on `/metrics`. */
export async function family(limiter: LimiterProcess, name: string): Promise<number> {
  const text = await (await fetch(`${limiter.url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}
