/** The two loads of bench:client, run inside one process as a service's callers would. */
import type { Acquire } from './variants';

const keyOf = (i: number): string => `user-${i}`;

/**
 * `callers` concurrent loops, each awaiting one acquire after the other for `seconds`; returns
 * decisions per second (refusals count too: every answer is a decision).
 */
export async function closedLoop(
  acquire: Acquire,
  callers: number,
  seconds: number,
): Promise<number> {
  let decisions = 0;
  let stop = false;
  const started = performance.now();
  const loop = async (i: number): Promise<void> => {
    const request = { key: keyOf(i) };
    while (!stop) {
      await acquire(request);
      decisions++;
    }
  };
  const timer = setTimeout(() => (stop = true), seconds * 1000);
  const loops = Array.from({ length: callers }, (_, i) => loop(i));
  await new Promise<void>((resolve) => setTimeout(resolve, seconds * 1000));
  const counted = decisions;
  const elapsed = (performance.now() - started) / 1000;
  clearTimeout(timer);
  stop = true;
  await Promise.all(loops);
  return counted / elapsed;
}

export interface Latency {
  readonly p50: number;
  readonly p99: number;
  readonly sent: number;
  readonly achieved: number;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/**
 * Open loop: starts acquires at `rate` per second for `seconds` whatever the answers do, each
 * timed from when it was due (not when the pacer got to it), so a stalled client shows. The
 * pacer wakes every millisecond and starts what is due.
 */
export async function openLoop(
  acquire: Acquire,
  rate: number,
  seconds: number,
  keys: number,
): Promise<Latency> {
  const total = Math.floor(rate * seconds);
  const latency = new Float64Array(total);
  let sent = 0;
  let answered = 0;
  let allIn!: () => void;
  const drained = new Promise<void>((resolve) => (allIn = resolve));
  const started = performance.now();
  const interval = 1000 / rate;
  const record = (seq: number, due: number): void => {
    latency[seq] = performance.now() - due;
    if (++answered === total) allIn();
  };
  const fail = (seq: number): void => {
    latency[seq] = Infinity;
    if (++answered === total) allIn();
  };
  const pace = (): void => {
    const due = Math.min(total, Math.floor((performance.now() - started) / interval) + 1);
    for (; sent < due; sent++) {
      const seq = sent;
      const dueAt = started + seq * interval;
      acquire({ key: keyOf(seq % keys) }).then(
        () => record(seq, dueAt),
        () => fail(seq),
      );
    }
    if (sent < total) setTimeout(pace, 1);
  };
  pace();
  await drained;
  const elapsed = (performance.now() - started) / 1000;
  latency.sort();
  return {
    p50: percentile(latency, 0.5),
    p99: percentile(latency, 0.99),
    sent: total,
    achieved: total / elapsed,
  };
}
