/**
 * npm run bench:client — the client SDK against one real limiter (dist/apps/limiter/main.js, a
 * separate process, as production runs it) over the local nats-server, every figure beside its
 * peer in the same run:
 *   (a) 1 000 concurrent callers in this process, each looping acquire: the SDK with auto-batching,
 *       without it, and raw nats.js `request` with JSON encode/decode (the peer): decisions/s,
 *       median of ROUNDS rounds, variants alternating within each round; then p50/p99 latency of
 *       each variant sent open loop at half of its own peak (the lower of the rounds' median and a
 *       peak taken just before), beside how long tasks waited for a CPU meanwhile;
 *   (b) the SDK without batching against raw nats.js: its overhead, as a ratio;
 *   (c) auto-batching with requestIds against without: what remembering the ids costs;
 *   (d) in this process, what checking a reply's shape costs beside decoding it (reply-check.ts);
 *   (e) in this process, an unguessable reply token beside a counted one (the SDK's before), and
 *       the limiter's reply-subject check beside decoding a request.
 * Each measurement opens its own connection and client (see Caller). The load generator, the
 * limiter and nats-server share this machine's cores.
 * BENCH_QUICK=1 shortens every run; BENCH_SKIP_BUILD=1 uses the existing build; BENCH_CPU_PROF=1
 * writes CPU profiles of the limiter into ./profiles (run this process with --cpu-prof for its own).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { closedLoop, openLoop, type Latency } from './client/load';
import { halfLoadRate, watchNoise, type Noise } from './client/machine';
import {
  REPLY_CHECK_BATCH,
  replyCheckFigures,
  replySubjectFigures,
  type ReplyCheckFigure,
} from './client/reply-check';
import {
  RAW,
  SDK_BATCHED,
  SDK_BATCHED_IDS,
  SDK_SINGLE,
  type Acquire,
  type Variant,
} from './client/variants';
import { freePort, startNode, type Child } from './limiter/processes';

const QUICK = process.env.BENCH_QUICK === '1';
const SECONDS = QUICK ? 0.5 : 3;
const LATENCY_SECONDS = QUICK ? 0.5 : 3;
const WARMUP_SECONDS = QUICK ? 0.3 : 1.5;
const ROUNDS = QUICK ? 1 : 3;
const CALLERS = 1000;
const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
const root = join(__dirname, '..');

const VARIANTS: readonly Variant[] = [SDK_BATCHED, SDK_SINGLE, RAW, SDK_BATCHED_IDS];

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : 'lost');
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;

async function startLimiter(prefix: string, dataDir: string): Promise<Child> {
  const port = await freePort();
  const profile =
    process.env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', '--cpu-prof-dir=profiles'] : [];
  return startNode(
    [...profile, join(root, 'dist', 'apps', 'limiter', 'main.js')],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `bench-${randomUUID()}`,
      // Every request admitted: the slowest path (a receipt per request).
      MAX_REQUESTS: '1000000000',
      WINDOW_MILLIS: '1000',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok,
  );
}

/**
 * A variant that opens its own NATS connection and client for each measurement and closes them
 * after. Connections left idle while other variants ran made nats.js's objects old, and once such a
 * connection carried load again the whole process spent 2–3x as long in GC (mark-compacts every
 * ~1.5 s, for every variant measured after); a service holds one connection that stays busy.
 */
interface Caller {
  readonly variant: Variant;
  measure<T>(use: (acquire: Acquire) => Promise<T>): Promise<T>;
}

function caller(variant: Variant, prefix: string): Caller {
  return {
    variant,
    async measure(use) {
      const nc = await connect({ servers: NATS_URL, name: `bench-${variant.name}` });
      const made = variant.make(nc, prefix);
      try {
        return await use(made.acquire);
      } finally {
        await made.close();
        await nc.close();
      }
    },
  };
}

const peakOf = (c: Caller, seconds: number): Promise<number> =>
  c.measure((acquire) => closedLoop(acquire, CALLERS, seconds));

/**
 * Median peak of ROUNDS rounds (order rotated round by round), then latency at half load: half of
 * the lower of that median and a peak taken just before (halfLoadRate), with the machine's noise.
 */
async function peaksAndLatency(callers: Caller[]): Promise<Map<Variant, Figures>> {
  const peaks = new Map<Variant, number[]>(callers.map((c) => [c.variant, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < callers.length; i++) {
      const caller = callers[(i + round) % callers.length]!;
      peaks.get(caller.variant)!.push(await peakOf(caller, SECONDS));
    }
  }
  const figures = new Map<Variant, Figures>();
  for (const caller of callers) {
    const peak = median(peaks.get(caller.variant)!);
    const { latency, noise } = await caller.measure(async (acquire) => {
      const rate = halfLoadRate(peak, await closedLoop(acquire, CALLERS, SECONDS));
      const stop = watchNoise();
      return { latency: await openLoop(acquire, rate, LATENCY_SECONDS, CALLERS), noise: stop() };
    });
    figures.set(caller.variant, { peak, latency, noise });
  }
  return figures;
}

interface Figures {
  peak: number;
  latency?: Latency;
  noise?: Noise;
}

async function main(): Promise<void> {
  if (process.env.BENCH_SKIP_BUILD !== '1') {
    execFileSync(join(root, 'node_modules', '.bin', 'nest'), ['build', 'limiter'], {
      cwd: root,
      stdio: 'inherit',
    });
  }
  const prefix = `bench.${randomUUID().replaceAll('-', '')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'client-bench-'));
  const limiter = await startLimiter(prefix, dataDir);
  try {
    // Each variant on a connection of its own, opened for each measurement (see Caller).
    const callers = VARIANTS.map((variant) => caller(variant, prefix));
    const main = callers.filter((c) => c.variant !== SDK_BATCHED_IDS);
    for (const c of main) await peakOf(c, WARMUP_SECONDS);
    const figures = await peaksAndLatency(main);
    // requestIds last, against auto-batching again: the ids it leaves in the limiter (up to
    // 16 384 per shard for 60 s) are not to weigh on the other figures.
    const idsPhase = callers.filter(
      (c) => c.variant === SDK_BATCHED_IDS || c.variant === SDK_BATCHED,
    );
    await peakOf(idsPhase[1]!, WARMUP_SECONDS);
    const ids = await peaksAndLatency(idsPhase);
    report(figures, ids, replyCheckFigures(QUICK), replySubjectFigures(QUICK));
  } finally {
    await limiter.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const percent = (n: number | undefined): string => (n === undefined ? 'n/a' : `${n.toFixed(0)}%`);
const row = (name: string, f: Figures, peer: number): string =>
  `| ${name} | ${fmt(f.peak)} | ${ratio(f.peak, peer)} | ${fmt(f.latency!.achieved)} | ${ms(f.latency!.p50)} | ${ms(f.latency!.p99)} | ${percent(f.noise!.cpuWaitPercent)} | ${ms(f.noise!.loopDelayP99)} |`;

const checkRow = (name: string, f: ReplyCheckFigure): string =>
  `${name}: decode ${f.decodeUs.toFixed(2)} µs, check ${f.checkUs.toFixed(2)} µs (${((f.checkUs / f.decodeUs) * 100).toFixed(1)}% of the decode)`;

function report(
  figures: Map<Variant, Figures>,
  ids: Map<Variant, Figures>,
  checks: ReturnType<typeof replyCheckFigures>,
  subjects: ReturnType<typeof replySubjectFigures>,
): void {
  const raw = figures.get(RAW)!.peak;
  const batched = figures.get(SDK_BATCHED)!;
  const single = figures.get(SDK_SINGLE)!.peak;
  const idsOff = ids.get(SDK_BATCHED)!;
  const idsOn = ids.get(SDK_BATCHED_IDS)!;
  const cpu = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}`;
  const header = [
    '| caller | decisions/s | ratio | half-load rate/s | p50 ms | p99 ms | CPU wait | loop delay p99 ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  console.log(
    [
      `bench:client — ${CALLERS} concurrent callers in one process, one limiter, nats-server; ${cpu};`,
      `median of ${ROUNDS} rounds of ${SECONDS}s; latency open loop for ${LATENCY_SECONDS}s at half each variant's own peak (the lower of the rounds' median and a peak taken just before);`,
      `CPU wait: share of that time some task on the machine waited for a CPU (/proc/pressure/cpu); loop delay: this process's event-loop delay then`,
      '',
      ...header,
      ...[SDK_BATCHED, SDK_SINGLE, RAW].map((v) => row(v.name, figures.get(v)!, raw)),
      '',
      `auto-batching vs raw nats.js request: ${ratio(batched.peak, raw)} (goal >= 3x); ${fmt(batched.peak)}/s (goal >= 300,000: ${batched.peak >= 300_000 ? 'met' : 'not met'}); p99 at half load ${ms(batched.latency!.p99)} ms (goal < 5)`,
      `SDK without batching vs raw: ${ratio(single, raw)}, overhead ${((raw / single - 1) * 100).toFixed(1)}% (goal <= 10%)`,
      '',
      'requestIds, measured after the above, each against auto-batching without ids in the same rounds:',
      ...header,
      row(SDK_BATCHED.name, idsOff, idsOff.peak),
      row(SDK_BATCHED_IDS.name, idsOn, idsOff.peak),
      `requestIds on vs off: ${ratio(idsOn.peak, idsOff.peak)}`,
      '',
      'reply checks, in this process (median of 7 rounds), beside decoding the same reply:',
      checkRow('one AcquireReply', checks.single),
      checkRow(`a BatchReply of ${REPLY_CHECK_BATCH}`, checks.batch),
      '',
      'reply subjects, in this process (median of 7 rounds):',
      `SDK reply token: unguessable ${subjects.tokenUs.toFixed(3)} µs, counted (before) ${subjects.counterUs.toFixed(3)} µs`,
      `limiter reply-subject check ${subjects.guardUs.toFixed(3)} µs, beside decoding a request ${subjects.decodeRequestUs.toFixed(3)} µs (${((subjects.guardUs / subjects.decodeRequestUs) * 100).toFixed(1)}%)`,
    ].join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
