/**
 * bench:match, the reload figure: the event-loop delay of a limiter while it reloads a
 * CONFIG_FILE of N globs (the file: 60 000 quotas `tenant-<id>-*`, about 6 MB), now (the
 * file read and parsed in a thread, its quotas put in force in slices) beside the reload as it was
 * (read, parsed and put in force on the event loop), in the same process, the same run. The
 * limiter runs in this process (startInProcessLimiter) so that monitorEventLoopDelay sees its loop.
 * Beside them, the same limiter with no reload, idle and busy in slices: on a shared machine the
 * loop stalls on its own.
 */
import { parseConfigFile } from '../../libs/contracts/src';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { QuotaLayersService } from '../../apps/limiter/src/control/quota-layers.service';
import { LimiterService } from '../../apps/limiter/src/engine-host/limiter.service';
import { ConfigLoaderService } from '../../apps/limiter/src/ops/config/config-loader.service';
import { startInProcessLimiter } from '../../test/support/in-process-limiter';

const SMALL =
  'quotas:\n  - name: api\n    match: api-*\n    limits: [{ name: rps, limit: 10, window: 1s }]\n';

/** The file: N quotas of one glob and one limit each. */
function globsFile(n: number): string {
  const lines = ['quotas:'];
  for (let i = 0; i < n; i++) {
    const id = String(i).padStart(6, '0');
    lines.push(
      `  - name: t${id}`,
      `    match: 'tenant-${id}-*'`,
      '    limits:',
      '      - { name: rps, limit: 10, window: 1s }',
    );
  }
  return `${lines.join('\n')}\n`;
}

interface Delay {
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Turns of the event loop longer than LONG_TURN_MS: how many, and their total ms. */
  readonly longTurns: number;
  readonly longMs: number;
}

const LONG_TURN_MS = 50;

/** Runs `work` with the event loop's delay recorded every millisecond (ms figures). */
async function delayDuring(work: () => Promise<void>): Promise<Delay> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let last = performance.now();
  let longTurns = 0;
  let longMs = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    if (now - last > LONG_TURN_MS) {
      longTurns++;
      longMs += now - last;
    }
    last = now;
  }, 1);
  // Let the histogram take a few samples of an idle loop first.
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 50));
  histogram.disable();
  clearInterval(probe);
  const ms = (ns: number): number => ns / 1e6;
  return {
    seconds,
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
    longTurns,
    longMs,
  };
}

/** Keeps the loop busy for `ms`, 4 ms of arithmetic at a time, as setQuotasInSlices does. */
async function spinInSlices(ms: number): Promise<void> {
  let sink = 0;
  for (const end = performance.now() + ms; performance.now() < end;) {
    const until = performance.now() + 4;
    while (performance.now() < until) sink += Math.sqrt(sink + 1);
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (sink < 0) console.log(sink);
}

/** `idleMs`: how long to record the machine's noise (the peers: no reload, idle and busy). */
export async function reloadFigure(n: number, idleMs: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-match-reload-'));
  const file = join(dir, 'limits.yaml');
  const big = join(dir, 'big.yaml');
  writeFileSync(file, SMALL);
  const text = globsFile(n);
  writeFileSync(big, text);
  const running = await startInProcessLimiter(join(dir, 'data'), { CONFIG_FILE: file });
  try {
    const loader = running.app.get(ConfigLoaderService);
    const layers = running.app.get(QuotaLayersService);
    const limiter = running.app.get(LimiterService);
    const inForce = (): number => limiter.quotas().length;

    // The machine's own noise, first (before any garbage): the same limiter with nothing to do,
    // then busy as the slices keep it (4 ms of arithmetic a turn), which the OS preempts more.
    const idle = await delayDuring(() => new Promise((resolve) => setTimeout(resolve, idleMs)));
    const busy = await delayDuring(() => spinInSlices(idleMs));

    // Now: the watched file changes; the watch reloads it. Timed until the set is in force.
    const after = await delayDuring(async () => {
      writeFileSync(file, text);
      while (inForce() !== n + 1) await new Promise((resolve) => setTimeout(resolve, 10));
    });
    await loader.reload(); // whatever read the watch still makes, before the next figure

    // Before: the same change made as the loader made it, on the event loop (the loader's old
    // body: read, parse, put in force). Started from the small config again.
    layers.setConfig(parseConfigFile(SMALL));
    let parseSeconds = 0;
    const before = await delayDuring(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const started = performance.now();
      const config = parseConfigFile(readFileSync(big, 'utf8'), { source: big });
      parseSeconds = (performance.now() - started) / 1000;
      layers.setConfig(config);
    });
    if (inForce() !== n + 1) throw new Error(`before: ${inForce()} quotas in force, not ${n + 1}`);

    const mib = (text.length / 2 ** 20).toFixed(1);
    console.log(
      `\n| reload of ${n.toLocaleString('en-US').replaceAll(',', ' ')} globs (${mib} MiB) | takes s | event-loop delay p50 / p99 / max ms | turns over ${LONG_TURN_MS} ms: count, total ms |`,
    );
    console.log('| --- | --- | --- | --- |');
    const row = (what: string, d: Delay): void =>
      console.log(
        `| ${what} | ${d.seconds.toFixed(2)} | ${d.p50.toFixed(1)} / ${d.p99.toFixed(1)} / ${d.max.toFixed(1)} | ${d.longTurns}, ${Math.round(d.longMs)} |`,
      );
    row('thread + slices (now)', after);
    row(`on the event loop (before; parsing ${parseSeconds.toFixed(2)} s of it)`, before);
    row('no reload, idle (the machine alone)', idle);
    row('no reload, busy in 4 ms slices (the machine alone)', busy);
    console.log(`longest turn, before / now: ${(before.max / after.max).toFixed(0)}x`);
  } finally {
    await running.app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
