/**
 * npm run bench:import — how long importConfig takes for documents of many quotas, and when the
 * last of them is in force on a limiter. A real admin and limiter process per size (started from
 * sources, fresh SQLite, the local NATS). Beside it, in the same run, the peer: the same number of
 * raw JetStream KV puts (64 in flight) until a raw KV watch has seen them all, the transport's own
 * floor for getting that many entries to a limiter. Meanwhile a client sends /v1/decide to the
 * limiter back to back, so the run also prints what applying the import costs its requests.
 * BENCH_QUICK=1 runs the smaller sizes only; BENCH_SIZES=1000,2000 picks them.
 */
import { controlNames } from '@app/contracts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { gqlData, startAdmin } from '../test/support/admin-process';
import { post, sleep } from '../test/support/limiter-http';
import { startLimiter, uniquePrefix } from '../test/support/limiter-process';
import { latenciesUntil } from './latency';

const QUICK = process.env['BENCH_QUICK'] === '1';
const SIZES = process.env['BENCH_SIZES']
  ? process.env['BENCH_SIZES'].split(',').map(Number)
  : QUICK
    ? [1_000, 5_000]
    : [1_000, 5_000, 30_000];
const NATS_URL = process.env['NATS_URL'] || 'nats://127.0.0.1:4222';
const IN_FLIGHT = 64;

const IMPORT = 'mutation I($d: String!) { importConfig(document: $d, format: yaml) { quotas } }';

function document(size: number): string {
  const lines = ['quotas:'];
  for (let i = 0; i < size; i++) {
    lines.push(
      `  - name: q${i}`,
      `    match: "q${i}-*"`,
      '    limits: [{ name: rps, limit: 10, window: 1s, algorithm: fixed_window }]',
    );
  }
  return lines.join('\n');
}

async function deleteBucket(name: string): Promise<void> {
  const nc = await connect({ servers: NATS_URL });
  await (await nc.jetstreamManager()).streams.delete(`KV_${name}`).catch(() => undefined);
  await nc.close();
}

/** Sequential /v1/decide round trips (a key of the default quota) until `stop` resolves. */
function latencies(url: string, stop: Promise<unknown>): Promise<number[]> {
  return latenciesUntil(stop, () => post(url, '/v1/decide', { key: 'latency-probe' }));
}

function latencySummary(sorted: readonly number[]): string {
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  const slow = sorted.filter((ms) => ms > 50).length;
  return `p99.9 ${at(0.999)?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms, ${slow} of ${sorted.length} over 50 ms`;
}

interface Outcome {
  answered: number;
  inForce: number;
  /** The limiter's decide latencies: for 2 s before the import, and from its start until in force. */
  before: string;
  during: string;
}

/** ms from sending the mutation to its answer, and to the last quota in force on the limiter. */
async function ours(size: number): Promise<Outcome> {
  const prefix = uniquePrefix();
  const dirs = [0, 1].map((i) => mkdtempSync(join(tmpdir(), `bench-import-${i}-`)));
  const env = { NATS_URL, NATS_SUBJECT_PREFIX: prefix, LOG_LEVEL: 'error' };
  const [admin, limiter] = await Promise.all([
    startAdmin({ ...env, DATA_DIR: dirs[0]! }),
    startLimiter({ ...env, DATA_DIR: dirs[1]! }),
  ]);
  try {
    const text = document(size);
    const last = `q${size - 1}`;
    const before = await latencies(limiter.url, sleep(2000));
    let inForce = 0;
    const done = (async () => {
      const started = performance.now();
      const data = await gqlData<{ importConfig: { quotas: string[] } }>(admin.url, IMPORT, {
        d: text,
      });
      const answered = performance.now() - started;
      if (data.importConfig.quotas.length !== size) throw new Error('not all quotas imported');
      for (;;) {
        const reply = await post(limiter.url, '/v1/decide', { key: 'probe', quota: last });
        if (reply['limit'] === 10) break;
        if (performance.now() - started > 120_000) throw new Error(`${last} not in force`);
        await sleep(5);
      }
      inForce = performance.now() - started;
      return answered;
    })();
    const during = await latencies(limiter.url, done);
    const answered = await done;
    return {
      answered,
      inForce,
      before: latencySummary(before),
      during: latencySummary(during),
    };
  } finally {
    await Promise.all([admin.stop(), limiter.stop()]);
    await deleteBucket(controlNames(prefix).bucket);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** ms from the first of `size` raw KV puts until a raw watch has seen them all. */
async function rawKv(size: number): Promise<number> {
  const nc = await connect({ servers: NATS_URL });
  const bucket = `bench_${uniquePrefix().replace(/\./g, '_')}`;
  const kv = await nc.jetstream().views.kv(bucket, { history: 1 });
  const watcher = await kv.watch();
  const value = document(1);
  let seen = 0;
  const allSeen = (async () => {
    for await (const entry of watcher) {
      if (entry.operation === 'PUT' && ++seen === size) return performance.now();
    }
    return NaN;
  })();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < size) await kv.put(`quota.${(next++).toString(16)}`, value);
    }),
  );
  const done = await allSeen;
  watcher.stop();
  await nc.close();
  await deleteBucket(bucket);
  return done - started;
}

async function main(): Promise<void> {
  console.log(`importConfig of N quotas (node ${process.version})`);
  for (const size of SIZES) {
    const { answered, inForce, before, during } = await ours(size);
    const peer = await rawKv(size);
    console.log(
      `N=${String(size).padEnd(6)} mutation answered ${answered.toFixed(0).padStart(6)} ms, ` +
        `last quota in force ${inForce.toFixed(0).padStart(6)} ms | raw KV puts seen ` +
        `${peer.toFixed(0).padStart(5)} ms | ratio ${(inForce / peer).toFixed(1)}x`,
    );
    console.log(`         limiter decide latency before: ${before}`);
    console.log(`         limiter decide latency during: ${during}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
