/**
 * npm run bench:propagation — how long a quota change made through the admin's GraphQL takes to be
 * in force on every limiter (issue 5 point 4: within 1 s). A real admin and two limiter processes
 * on the local NATS, each started from sources. For each of ROUNDS changes: the instant before
 * the mutation is sent, until both limiters answer /v1/decide with the new limit (polled back to
 * back). Measured with control keys (every entry signed by the admin and checked by the limiters:
 * what production runs) and without (control unauthenticated), in the same run. Beside them, the
 * peer: a raw JetStream KV put seen by a raw KV watch (the transport's own floor). Then, with
 * keys, a forged entry put into the bucket by a plain client: whether a limiter ever served it,
 * and how long until the admin's own value was back in the bucket. Prints p50/p99/max and the
 * ratios of the p99s. BENCH_QUICK=1 shortens it.
 */
import { controlNames, quotaEntryKey, SIGNATURE_TAG } from '@app/contracts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type KV, type NatsConnection } from 'nats';
import { gqlData, startAdmin, type AdminProcess } from '../test/support/admin-process';
import { NO_CONTROL_KEYS_ENV } from '../test/support/control-keys';
import { forgedQuota } from '../test/support/forged-control';
import { post } from '../test/support/limiter-http';
import { startLimiter, uniquePrefix, type LimiterProcess } from '../test/support/limiter-process';

const QUICK = process.env['BENCH_QUICK'] === '1';
const ROUNDS = QUICK ? 20 : 200;
const FORGERIES = QUICK ? 5 : 20;
const NATS_URL = process.env['NATS_URL'] || 'nats://127.0.0.1:4222';

const UPSERT = 'mutation U($input: QuotaInput!) { upsertQuota(input: $input) { version } }';

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function summary(label: string, samples: number[]): { p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  const p99 = percentile(sorted, 99);
  const max = sorted.at(-1) ?? NaN;
  console.log(
    `${label.padEnd(34)} n=${sorted.length}  p50 ${p50.toFixed(1)} ms  p99 ${p99.toFixed(1)} ms  max ${max.toFixed(1)} ms`,
  );
  return { p99 };
}

async function seen(limiter: LimiterProcess, limit: number, deadline: number): Promise<number> {
  for (;;) {
    const reply = await post(limiter.url, '/v1/decide', { key: 'bench-probe', quota: 'bench' });
    if (reply['limit'] === limit) return performance.now();
    if (performance.now() > deadline) {
      throw new Error(`limit ${limit} not seen within 5 s: ${JSON.stringify(reply)}`);
    }
  }
}

interface AdminRun {
  readonly samples: number[];
  /** With keys: forged entries put, limits served meanwhile, ms until the admin's value was back. */
  readonly forged?: { readonly served: Set<unknown>; readonly restoredMs: number[] };
}

async function admin(keys: Record<string, string>, forge: boolean): Promise<AdminRun> {
  const prefix = uniquePrefix();
  const dirs = [0, 1, 2].map((i) => mkdtempSync(join(tmpdir(), `bench-prop-${i}-`)));
  const env = { NATS_URL, NATS_SUBJECT_PREFIX: prefix, LOG_LEVEL: 'error', ...keys };
  const [a, ...limiters] = await Promise.all([
    startAdmin({ ...env, DATA_DIR: dirs[0]! }),
    startLimiter({ ...env, DATA_DIR: dirs[1]! }),
    startLimiter({ ...env, DATA_DIR: dirs[2]! }),
  ]);
  const samples: number[] = [];
  try {
    for (let round = 0; round < ROUNDS + 1; round++) {
      const limit = 100 + round;
      const input = { name: 'bench', limits: [{ name: 'rpm', limit, windowMs: 60_000 }] };
      const started = performance.now();
      await gqlData(a.url, UPSERT, { input });
      const deadline = started + 5000;
      const at = await Promise.all(limiters.map((l) => seen(l, limit, deadline)));
      // Round 0 creates the quota and warms every path up; it is not counted.
      if (round > 0) samples.push(Math.max(...at) - started);
    }
    return { samples, ...(forge && { forged: await forgeries(a, limiters, prefix) }) };
  } finally {
    await Promise.all([a.stop(), ...limiters.map((l) => l.stop())]);
    const nc = await connect({ servers: NATS_URL });
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(`KV_${controlNames(prefix).bucket}`).catch(() => undefined);
    await nc.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * FORGERIES times: a plain client puts `bench` with a limit of a million; the limiters are
 * polled meanwhile, and the bucket until it holds the admin's signed value again.
 */
async function forgeries(
  a: AdminProcess,
  limiters: LimiterProcess[],
  prefix: string,
): Promise<{ served: Set<unknown>; restoredMs: number[] }> {
  const nc = await connect({ servers: NATS_URL });
  const kv = await nc.jetstream().views.kv(controlNames(prefix).bucket, { bindOnly: true });
  const key = quotaEntryKey('bench');
  const served = new Set<unknown>();
  const restoredMs: number[] = [];
  const forged = JSON.stringify(forgedQuota('bench'));
  for (let round = 0; round < FORGERIES; round++) {
    const started = performance.now();
    await kv.put(key, forged);
    for (;;) {
      for (const l of limiters) {
        served.add((await post(l.url, '/v1/decide', { key: 'p', quota: 'bench' }))['limit']);
      }
      const text = (await kv.get(key))?.string() ?? '';
      if (text.startsWith(`${SIGNATURE_TAG} `)) break;
      if (performance.now() - started > 10_000) throw new Error(`not restored: ${a.output()}`);
    }
    restoredMs.push(performance.now() - started);
  }
  await nc.close();
  return { served, restoredMs };
}

async function rawKv(): Promise<number[]> {
  const nc: NatsConnection = await connect({ servers: NATS_URL });
  const bucket = `bench_${uniquePrefix().replace(/\./g, '_')}`;
  const kv: KV = await nc.jetstream().views.kv(bucket, { history: 1 });
  const watcher = await kv.watch({ key: 'entry' });
  const arrivals = new Map<string, number>();
  const reading = (async () => {
    for await (const e of watcher) arrivals.set(e.string(), performance.now());
  })();
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS + 1; round++) {
    const value = `v${round}`;
    const started = performance.now();
    await kv.put('entry', value);
    while (!arrivals.has(value)) await new Promise((r) => setImmediate(r));
    if (round > 0) samples.push(arrivals.get(value)! - started);
  }
  watcher.stop();
  await reading;
  await (await nc.jetstreamManager()).streams.delete(`KV_${bucket}`);
  await nc.close();
  return samples;
}

async function main(): Promise<void> {
  console.log(`propagation, ${ROUNDS} changes each (node ${process.version})`);
  const signed = await admin({}, true);
  const ours = summary('GraphQL mutation → both limiters', signed.samples);
  const open = summary(
    '  the same, control unauthenticated',
    (await admin(NO_CONTROL_KEYS_ENV, false)).samples,
  );
  const peer = summary('raw KV put → raw KV watch', await rawKv());
  console.log(
    `p99 ratios: signed / unauthenticated ${(ours.p99 / open.p99).toFixed(2)}x; ` +
      `signed / raw KV ${(ours.p99 / peer.p99).toFixed(1)}x; goal: p99 < 1000 ms`,
  );
  const forged = signed.forged!;
  summary(`forged put → admin's value back`, forged.restoredMs);
  console.log(`limits the limiters served meanwhile: ${[...forged.served].join(', ')}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
