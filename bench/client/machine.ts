/**
 * How noisy the machine was while a latency figure was taken: the share of time some task waited
 * for a CPU (Linux pressure stall information, /proc/pressure/cpu) and this process's own
 * event-loop delay. Both explain a p99 that the code under test did not cause.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** The cumulative `some ... total=<µs>` of /proc/pressure/cpu's text; undefined when absent. */
export function cpuWaitTotalMicros(text: string): number | undefined {
  const some = text.split('\n').find((line) => line.startsWith('some '));
  const total = some?.match(/\btotal=(\d+)\b/)?.[1];
  return total === undefined ? undefined : Number(total);
}

function readCpuWaitMicros(): number | undefined {
  try {
    return cpuWaitTotalMicros(readFileSync('/proc/pressure/cpu', 'utf8'));
  } catch {
    return undefined; // not Linux, or a kernel without PSI
  }
}

export interface Noise {
  /** % of the wall time some runnable task waited for a CPU; undefined without PSI. */
  readonly cpuWaitPercent: number | undefined;
  /** p99 of this process's event-loop delay, ms. */
  readonly loopDelayP99: number;
}

/** Starts watching; the returned function stops and tells what was seen since. */
export function watchNoise(): () => Noise {
  const wait0 = readCpuWaitMicros();
  const started = performance.now();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  return () => {
    delay.disable();
    const wait1 = readCpuWaitMicros();
    const wallMicros = (performance.now() - started) * 1000;
    return {
      cpuWaitPercent:
        wait0 === undefined || wait1 === undefined
          ? undefined
          : ((wait1 - wait0) / wallMicros) * 100,
      loopDelayP99: delay.percentile(99) / 1e6,
    };
  };
}

/**
 * The open-loop rate for "half the peak load": half of the lower of the peak of the rounds and a
 * peak taken just before. When the machine got busier since the rounds, half of their peak can be
 * more than the machine now serves, and an open loop above capacity queues without bound: its p99
 * then measures the backlog (hundreds of ms), not the client.
 */
export function halfLoadRate(roundsPeak: number, freshPeak: number): number {
  return Math.min(roundsPeak, freshPeak) / 2;
}
