/**
 * npm run bench:limiter — the limiter service as production runs it (dist/apps/limiter/main.js, a
 * separate process), each figure beside its peer in the same run, median of 3 rounds:
 *   (a) NATS single acquires, 128 in flight, one client connection, vs a raw nats.js echo
 *       responder replying the same number of bytes, driven by the same loop;
 *   (b) NATS batches of 100 acquires, decisions/s, vs the echo responder at the batch reply size;
 *   (c) p50/p99 latency of single acquires sent open loop at half of the peak rate of (a);
 *   (d) HTTP `POST /rate/:key` vs a bare Fastify route, both under autocannon in its own process.
 *   (g) h2c `POST /rate/:key`, 4 sessions x 64 streams, vs a bare node:http2 server, both under
 *       bench/limiter/h2-load.ts in its own process.
 *   (h) NATS batches of 100 acquires on one hot key to three limiters (one queue group, one Redis):
 *       a cluster-scope quota (its hot key leased) vs the same limits with scope: local
 *       (bench/limiter/cluster-figure.ts); needs Redis (REDIS_URL), left out of a full run without it.
 *   (i) RSS and heap of a limiter after 1 M NATS acquires each with a new requestId, beside a
 *       limiter after the same acquires without ids (bench/limiter/id-memory.ts).
 *   (j) NATS single acquires and HTTP `POST /rate/:key` with tracing on (a span per acquire to an
 *       OTLP/HTTP receiver in this process that discards them) vs the same build with tracing off
 *       (bench/limiter/tracing-figure.ts).
 *   (e), (f) "NestJS transport": (a) and (b) against the limiter built from the commit before its
 *       NATS side became a Nest transport strategy (bench/limiter/baseline.ts), plain JSON and
 *       Nest envelopes; written to its own section of docs/benchmarks.md.
 * The load generator, the servers and nats-server share this machine's cores.
 * BENCH_QUICK=1 shortens every run (smoke test); BENCH_SKIP_BUILD=1 uses the existing build of this tree;
 * BENCH_ONLY=transport runs (e) and (f) only, BENCH_ONLY=h2c (g) only, BENCH_ONLY=cluster (h) only,
 * BENCH_ONLY=ids (i) only, BENCH_ONLY=tracing (j) only;
 * BENCH_BASELINE_REF builds
 * another peer for (e) and (f).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { buildBaseline, DIRECT_NATS_REF } from './limiter/baseline';
import {
  CLUSTER_REPLICAS,
  clusterFigure,
  redisReachable,
  type ClusterFigure,
} from './limiter/cluster-figure';
import { H2C_SESSIONS, H2C_STREAMS, h2cFigure } from './limiter/h2c-figure';
import { idMemoryFigure, type IdMemoryFigure } from './limiter/id-memory';
import { closedLoop, openLoop, type Latency } from './limiter/nats-load';
import { transportFigures } from './limiter/nest-transport';
import { freePort, runNode, startNode, type Child } from './limiter/processes';
import { median, rounds, ROUNDS } from './limiter/rounds';
import { tracingFigure, type TracingFigure } from './limiter/tracing-figure';

const QUICK = process.env.BENCH_QUICK === '1';
const ONLY_TRANSPORT = process.env.BENCH_ONLY === 'transport';
const ONLY_H2C = process.env.BENCH_ONLY === 'h2c';
const ONLY_CLUSTER = process.env.BENCH_ONLY === 'cluster';
const ONLY_IDS = process.env.BENCH_ONLY === 'ids';
const ONLY_TRACING = process.env.BENCH_ONLY === 'tracing';
/** Acquires per limiter in (i): the issue's 1 M, or 100 000 in a smoke run. */
const ID_COUNT = QUICK ? 100_000 : 1_000_000;
const SECONDS = QUICK ? 0.5 : 3;
const WARMUP_SECONDS = QUICK ? 0.3 : 2;
const IN_FLIGHT = 128;
const BATCH_SIZE = 100;
const BATCH_IN_FLIGHT = 8;
const HTTP_CONNECTIONS = 64;
const KEYS = 10_000;
const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

const root = join(__dirname, '..', '..', '..');
const here = __dirname;

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const ms = (n: number): string => n.toFixed(3);
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;

function acquirePayloads(): Buffer[] {
  return Array.from({ length: KEYS }, (_, i) => Buffer.from(JSON.stringify({ key: `user-${i}` })));
}

function batchPayloads(): Buffer[] {
  return Array.from({ length: 100 }, (_, b) =>
    Buffer.from(
      JSON.stringify({
        requests: Array.from({ length: BATCH_SIZE }, (_, i) => ({
          key: `user-${(b * BATCH_SIZE + i) % KEYS}`,
        })),
      }),
    ),
  );
}

async function reply(nc: NatsConnection, subject: string, payload: Uint8Array): Promise<Buffer> {
  const msg = await nc.request(subject, payload, { timeout: 5_000 });
  return Buffer.from(msg.data);
}

async function httpReady(url: string): Promise<boolean> {
  const res = await fetch(url);
  return res.ok;
}

interface Autocannon {
  requests: { average: number };
  non2xx: number;
  errors: number;
}

async function autocannon(url: string, seconds: number): Promise<number> {
  const out = await runNode([
    join(root, 'node_modules', 'autocannon', 'autocannon.js'),
    '--json',
    '-m',
    'POST',
    '-c',
    String(HTTP_CONNECTIONS),
    '-d',
    String(Math.max(1, Math.round(seconds))),
    url,
  ]);
  const result = JSON.parse(out) as Autocannon;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return result.requests.average;
}

function medianLatency(samples: Latency[]): Latency {
  return {
    p50: median(samples.map((s) => s.p50)),
    p99: median(samples.map((s) => s.p99)),
    sent: median(samples.map((s) => s.sent)),
    answered: median(samples.map((s) => s.answered)),
  };
}

function writeDocs(heading: string, section: string): void {
  const file = join(root, 'docs', 'benchmarks.md');
  const doc = readFileSync(file, 'utf8');
  const start = doc.indexOf(heading);
  // Our section runs to the next "## " heading; re-runs replace it, nothing else is touched.
  const next = start === -1 ? -1 : doc.indexOf('\n## ', start + heading.length);
  const before = start === -1 ? doc.trimEnd() + '\n\n' : doc.slice(0, start);
  const after = next === -1 ? '' : doc.slice(next + 1);
  const notes = start === -1 ? '' : extractNotes(doc.slice(start, next === -1 ? undefined : next));
  writeFileSync(file, `${before}${heading}\n\n${section}${notes}${after ? `\n${after}` : ''}`);
}

/** Hand-written text kept across re-runs: everything after the generated block's end marker. */
const NOTES_MARKER = '<!-- end of generated figures -->';
function extractNotes(section: string): string {
  const at = section.indexOf(NOTES_MARKER);
  return at === -1 ? '' : section.slice(at + NOTES_MARKER.length).replace(/^\n*/, '\n');
}

/**
 * A limiter process (`main`: its built main.js) serving `prefix`, ready once /readyz says so;
 * `env` adds to (or overrides) its environment.
 */
async function startLimiter(
  main: string,
  prefix: string,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<Child & { url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = await startNode(
    [main],
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
      ...env,
    },
    () => httpReady(`${url}/readyz`),
  );
  return Object.assign(child, { url });
}

async function main(): Promise<void> {
  const skipBuild = process.env.BENCH_SKIP_BUILD === '1';
  if (!skipBuild) {
    execFileSync(join(root, 'node_modules', '.bin', 'nest'), ['build', 'limiter'], {
      cwd: root,
      stdio: 'inherit',
    });
  }
  if (ONLY_H2C) return onlyH2c();
  if (ONLY_CLUSTER) return onlyCluster();
  if (ONLY_IDS) return onlyIds();
  if (ONLY_TRACING) return onlyTracing();
  const baseline = buildBaseline(root, DIRECT_NATS_REF);
  const prefix = `bench.${randomUUID().replaceAll('-', '')}`;
  const echoPrefix = `${prefix}.echo`;
  const directPrefix = `${prefix}.direct`;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-bench-'));
  const directDataDir = mkdtempSync(join(tmpdir(), 'limiter-bench-direct-'));
  const children: Child[] = [];
  const nc = await connect({ servers: NATS_URL, name: 'bench-client' });
  try {
    const limiter = await startLimiter(
      join(root, 'dist', 'apps', 'limiter', 'main.js'),
      prefix,
      dataDir,
    );
    children.push(limiter);
    const direct = await startLimiter(baseline.main, directPrefix, directDataDir);
    children.push(direct);
    const limiterUrl = limiter.url;

    const singles = acquirePayloads();
    const batches = batchPayloads();
    const transport = (seconds: number): Promise<string> =>
      transportFigures({
        nc,
        strategy: prefix,
        direct: directPrefix,
        directRef: DIRECT_NATS_REF,
        singles,
        batches,
        inFlight: IN_FLIGHT,
        batchInFlight: BATCH_IN_FLIGHT,
        batchSize: BATCH_SIZE,
        seconds,
      });
    process.stderr.write('warming up the NestJS transport peers\n');
    await transport(WARMUP_SECONDS / ROUNDS);
    const transportTable = await transport(SECONDS);
    process.stdout.write(`${transportTable}\n`);
    const date = new Date().toISOString().slice(0, 10);
    if (!QUICK) {
      writeDocs(
        '## NestJS transport: `npm run bench:limiter`',
        generated(
          `Run of ${date} (both limiters built as production builds them):`,
          transportTable,
        ),
      );
    }
    const directExit = await direct.stop();
    if (directExit !== 0)
      throw new Error(`direct limiter exited ${directExit}:\n${direct.output()}`);
    if (ONLY_TRANSPORT) return;

    const singleReply = await reply(nc, `${prefix}.acquire`, singles[0]!);
    const batchReply = await reply(nc, `${prefix}.acquire.batch`, batches[0]!);
    const echo = await startNode(
      [
        join(here, 'limiter', 'nats-echo-server.js'),
        NATS_URL,
        echoPrefix,
        String(singleReply.length),
        String(batchReply.length),
      ],
      {},
      (out) => out.includes('ready'),
    );
    children.push(echo);
    const fastifyPort = await freePort();
    const fastify = await startNode(
      [join(here, 'limiter', 'fastify-raw-server.js'), String(fastifyPort)],
      {},
      (out) => out.includes('ready'),
    );
    children.push(fastify);

    const single =
      (p: string, seconds = SECONDS) =>
      () =>
        closedLoop(nc, `${p}.acquire`, singles, IN_FLIGHT, seconds);
    const batch =
      (p: string, seconds = SECONDS) =>
      async () =>
        BATCH_SIZE *
        (await closedLoop(nc, `${p}.acquire.batch`, batches, BATCH_IN_FLIGHT, seconds));
    const limiterRate = `${limiterUrl}/rate/bench-key`;
    const fastifyRate = `http://127.0.0.1:${fastifyPort}/rate/bench-key`;

    process.stderr.write('warming up\n');
    await single(prefix, WARMUP_SECONDS)();
    await single(echoPrefix, WARMUP_SECONDS)();
    await batch(prefix, WARMUP_SECONDS)();
    await batch(echoPrefix, WARMUP_SECONDS)();
    await autocannon(limiterRate, 1);
    await autocannon(fastifyRate, 1);

    process.stderr.write('(a) NATS single acquires\n');
    const [aLimiter, aEcho] = (await rounds([single(prefix), single(echoPrefix)])).map(median);
    process.stderr.write('(b) NATS batches\n');
    const [bLimiter, bEcho] = (await rounds([batch(prefix), batch(echoPrefix)])).map(median);
    const rate = Math.round(aLimiter! / 2);
    process.stderr.write(`(c) latency at ${rate}/s\n`);
    const [cLimiter, cEcho] = (
      await rounds([
        () => openLoop(nc, `${prefix}.acquire`, singles, rate, SECONDS),
        () => openLoop(nc, `${echoPrefix}.acquire`, singles, rate, SECONDS),
      ])
    ).map(medianLatency);
    process.stderr.write('(d) HTTP\n');
    const [dLimiter, dFastify] = (
      await rounds([() => autocannon(limiterRate, SECONDS), () => autocannon(fastifyRate, SECONDS)])
    ).map(median);

    process.stderr.write('(g) h2c\n');
    const g = await h2cFigure(limiterUrl, SECONDS, WARMUP_SECONDS);

    const limiterExit = await limiter.stop();
    if (limiterExit !== 0) throw new Error(`limiter exited ${limiterExit}:\n${limiter.output()}`);

    process.stderr.write('(h) cluster scope, one hot key, three limiters\n');
    const h = (await redisReachable(REDIS_URL)) ? await cluster(nc) : undefined;

    process.stderr.write(
      `(i) memory after ${fmt(ID_COUNT)} acquires with and without requestIds\n`,
    );
    const i = await idMemory(nc);

    process.stderr.write('(j) tracing off and on\n');
    const j = await tracing(nc, singles);

    const table = [
      `node ${process.version}; ${cpus().length} cores shared by the load generator, the servers and`,
      `nats-server; median of ${ROUNDS} rounds of ${SECONDS}s, peers alternating round by round`,
      '',
      '| figure | limiter | peer | peer is | ratio | goal |',
      '|---|---:|---:|---|---:|---|',
      `| (a) NATS acquire, ${IN_FLIGHT} in flight, req/s | ${fmt(aLimiter!)} | ${fmt(aEcho!)} | nats.js echo (${singleReply.length} B reply) | ${ratio(aLimiter!, aEcho!)} | >= 0.9x |`,
      `| (b) NATS batch of ${BATCH_SIZE}, ${BATCH_IN_FLIGHT} in flight, decisions/s | ${fmt(bLimiter!)} | ${fmt(bEcho!)} | nats.js echo (${batchReply.length} B reply) x ${BATCH_SIZE} | ${ratio(bLimiter!, bEcho!)} | >= 500 000/s |`,
      `| (c) NATS acquire p50 at ${fmt(rate)}/s, ms | ${ms(cLimiter!.p50)} | ${ms(cEcho!.p50)} | nats.js echo, same rate | | |`,
      `| (c) NATS acquire p99 at ${fmt(rate)}/s, ms | ${ms(cLimiter!.p99)} | ${ms(cEcho!.p99)} | nats.js echo, same rate | | <= 2 ms |`,
      `| (d) HTTP POST /rate/:key, ${HTTP_CONNECTIONS} connections, req/s | ${fmt(dLimiter!)} | ${fmt(dFastify!)} | bare Fastify 5 route | ${ratio(dLimiter!, dFastify!)} | >= 0.75x |`,
      h2cRow(g),
      clusterRow(h),
      ...idRows(i),
      ...tracingRows(j),
    ].join('\n');
    process.stdout.write(`${table}\n`);
    if (QUICK) return;
    writeDocs(
      '## Limiter: `npm run bench:limiter`',
      generated(`Run of ${date} (\`dist/apps/limiter/main.js\`, as production runs it):`, table),
    );
  } finally {
    await nc.close();
    for (const child of children.reverse()) await child.stop();
    for (const dir of [dataDir, directDataDir, baseline.dir]) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

function h2cRow(g: { limiter: number; bare: number }): string {
  return `| (g) h2c POST /rate/:key, ${H2C_SESSIONS} sessions x ${H2C_STREAMS} streams, req/s | ${fmt(g.limiter)} | ${fmt(g.bare)} | bare node:http2 server | ${ratio(g.limiter, g.bare)} | >= 0.75x |`;
}

/** (h) against three limiters of this build (bench/limiter/cluster-figure.ts). */
function cluster(nc: NatsConnection): Promise<ClusterFigure> {
  const main = join(root, 'dist', 'apps', 'limiter', 'main.js');
  return clusterFigure({
    nc,
    redisUrl: REDIS_URL,
    batchSize: BATCH_SIZE,
    batchInFlight: BATCH_IN_FLIGHT,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    start: (prefix, dataDir, env) => startLimiter(main, prefix, dataDir, env),
  });
}

function clusterRow(h: ClusterFigure | undefined): string {
  const figure = `(h) NATS batch of ${BATCH_SIZE} on one hot key, ${CLUSTER_REPLICAS} limiters, ${BATCH_IN_FLIGHT} in flight, decisions/s`;
  if (h === undefined) return `| ${figure} | | | no Redis at ${REDIS_URL}: not run | | >= 0.8x |`;
  const share = `${(h.leasedShare * 100).toFixed(1)}% of cluster decisions from slices`;
  return `| ${figure} | ${fmt(h.cluster)} | ${fmt(h.local)} | same limits, scope: local (${share}) | ${ratio(h.cluster, h.local)} | >= 0.8x |`;
}

/** BENCH_ONLY=cluster: (h) alone, printed, the docs left alone; Redis is needed. */
async function onlyCluster(): Promise<void> {
  if (!(await redisReachable(REDIS_URL))) throw new Error(`(h) needs Redis at ${REDIS_URL}`);
  const nc = await connect({ servers: NATS_URL, name: 'bench-client' });
  try {
    const h = await cluster(nc);
    process.stdout.write(
      [
        `node ${process.version}; ${cpus().length} cores shared by the load generator, ${CLUSTER_REPLICAS} limiters,`,
        `nats-server and Redis; median of ${ROUNDS} rounds of ${SECONDS}s, peers alternating round by round`,
        '',
        '| figure | limiter | peer | peer is | ratio | goal |',
        '|---|---:|---:|---|---:|---|',
        clusterRow(h),
        '',
      ].join('\n'),
    );
  } finally {
    await nc.close();
  }
}

/** (i) against fresh limiters of this build (bench/limiter/id-memory.ts). */
function idMemory(nc: NatsConnection): Promise<IdMemoryFigure> {
  const main = join(root, 'dist', 'apps', 'limiter', 'main.js');
  return idMemoryFigure({
    nc,
    count: ID_COUNT,
    start: (prefix, dataDir) => startLimiter(main, prefix, dataDir),
  });
}

function idRows(i: IdMemoryFigure): string[] {
  const mib = (bytes: number): string => fmt(bytes / 1_048_576);
  const peer = `${fmt(ID_COUNT)} acquires without ids`;
  const figure = `(i) after ${fmt(ID_COUNT)} NATS acquires, each a new requestId`;
  const perId = (a: number, b: number): string => `${fmt((a - b) / ID_COUNT)} B per id`;
  return [
    `| ${figure}: RSS, MiB | ${mib(i.withIds.rss)} | ${mib(i.withoutIds.rss)} | ${peer} (${perId(i.withIds.rss, i.withoutIds.rss)}) | ${ratio(i.withIds.rss, i.withoutIds.rss)} | |`,
    `| ${figure}: V8 heap used, MiB | ${mib(i.withIds.heap)} | ${mib(i.withoutIds.heap)} | ${peer} (${perId(i.withIds.heap, i.withoutIds.heap)}) | ${ratio(i.withIds.heap, i.withoutIds.heap)} | |`,
  ];
}

/** BENCH_ONLY=ids: (i) alone, printed, the docs left alone. */
async function onlyIds(): Promise<void> {
  const nc = await connect({ servers: NATS_URL, name: 'bench-client' });
  try {
    const i = await idMemory(nc);
    process.stdout.write(
      [
        `node ${process.version}; ${cpus().length} cores; one fresh limiter per column`,
        '',
        '| figure | limiter | peer | peer is | ratio | goal |',
        '|---|---:|---:|---|---:|---|',
        ...idRows(i),
        '',
      ].join('\n'),
    );
  } finally {
    await nc.close();
  }
}

/** (j) against two limiters of this build, tracing off and on (bench/limiter/tracing-figure.ts). */
function tracing(nc: NatsConnection, singles: readonly Uint8Array[]): Promise<TracingFigure> {
  const main = join(root, 'dist', 'apps', 'limiter', 'main.js');
  return tracingFigure({
    nc,
    singles,
    inFlight: IN_FLIGHT,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    http: autocannon,
    start: (prefix, dataDir, env) => startLimiter(main, prefix, dataDir, env),
  });
}

function tracingRows(j: TracingFigure): string[] {
  const peer = 'same build, tracing off';
  const exported = `spans received: about ${(j.exportedShare * 100).toFixed(0)}% of traced acquires`;
  return [
    `| (j) NATS acquire, ${IN_FLIGHT} in flight, req/s, every acquire a span | ${fmt(j.natsOn)} | ${fmt(j.natsOff)} | ${peer} (${exported}) | ${ratio(j.natsOn, j.natsOff)} | |`,
    `| (j) HTTP POST /rate/:key, ${HTTP_CONNECTIONS} connections, req/s, every acquire a span | ${fmt(j.httpOn)} | ${fmt(j.httpOff)} | ${peer} | ${ratio(j.httpOn, j.httpOff)} | |`,
  ];
}

/** BENCH_ONLY=tracing: (j) alone, printed, the docs left alone. */
async function onlyTracing(): Promise<void> {
  const nc = await connect({ servers: NATS_URL, name: 'bench-client' });
  try {
    const j = await tracing(nc, acquirePayloads());
    process.stdout.write(
      [
        `node ${process.version}; ${cpus().length} cores shared by the load generator, the OTLP receiver,`,
        `two limiters and nats-server; median of ${ROUNDS} rounds of ${SECONDS}s, peers alternating round by round`,
        '',
        '| figure | limiter | peer | peer is | ratio | goal |',
        '|---|---:|---:|---|---:|---|',
        ...tracingRows(j),
        '',
      ].join('\n'),
    );
  } finally {
    await nc.close();
  }
}

/** BENCH_ONLY=h2c: (g) alone, printed, the docs left alone. */
async function onlyH2c(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-bench-h2c-'));
  const limiter = await startLimiter(
    join(root, 'dist', 'apps', 'limiter', 'main.js'),
    `bench.${randomUUID().replaceAll('-', '')}`,
    dataDir,
  );
  try {
    const g = await h2cFigure(limiter.url, SECONDS, WARMUP_SECONDS);
    process.stdout.write(
      [
        `node ${process.version}; ${cpus().length} cores; median of ${ROUNDS} rounds of ${SECONDS}s`,
        '',
        '| figure | limiter | peer | peer is | ratio | goal |',
        '|---|---:|---:|---|---:|---|',
        h2cRow(g),
        '',
      ].join('\n'),
    );
  } finally {
    await limiter.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A generated block: its title line, the table, and the marker hand-written notes follow. */
function generated(title: string, table: string): string {
  return [title, '', '```', table, '```', '', NOTES_MARKER, ''].join('\n');
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
