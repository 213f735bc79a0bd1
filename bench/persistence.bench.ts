/**
 * npm run bench:persistence — what persisting usage costs the limiter as production runs it
 * (dist/apps/limiter/main.js, a separate process), at 300 000 and 1 000 000 persisted keys.
 *
 * Per key count, one fresh limiter per subject, each with its own empty DATA_DIR:
 *   - `off`: the same build with persistence off (DATA_DIR cannot be created), the peer;
 *   - `before`: another build given by BENCH_BEFORE_ROOT (e.g. the code before issue 11), if set;
 *   - `after`: this checkout's build.
 * Each run fills N keys of a persisted quota (`/v1/acquire/batch`, 1000 a request), then for
 * three save periods (15 s) sends traffic touching a share of the keys (10 % of them per 5 s
 * period, random keys) while a probe sends `GET /healthz` back to back. It prints the event-loop
 * delay inside the limiter over that window (prom-client's monitorEventLoopDelay, 10 ms
 * resolution, via /metrics), the probe's round trips (p50/p99/max), RSS per key, the last save's
 * duration where the build reports it, the time SIGTERM takes, and the median of 3 restarts until
 * /healthz answers (usage restored before the server listens), the subjects' restarts taken in
 * turn, round by round, so a drift of the machine's load touches all. Beside it, in the same run, the
 * lower bound of writing: a raw better-sqlite3 upsert of the same rows (one transaction, N rows,
 * then the share one period touches) into the same table shape.
 *
 * The quota is a fixed window of one day, so no key goes idle during a run (with a one-minute
 * window untouched keys would expire mid-run and the run would measure fewer keys); a row costs
 * the same whatever the window length. BENCH_KEYS=300000 picks the sizes; BENCH_QUICK=1 runs
 * 20 000 keys (smoke test); BENCH_SKIP_BUILD=1 uses the existing build.
 *
 * BENCH_FAILED_SAVES=1 measures instead what failing saves cost an idle limiter (issue 25 point
 * 11), at 200 000 keys (BENCH_KEYS): after the fill is saved, every write to the file fails from
 * then on (a trigger that raises SQLite's "database or disk is full", as a full disk does), one
 * key is touched, and the limiter's CPU (process_cpu_seconds_total, its threads included) is read
 * over three idle save periods. Peer in the same run: the same build whose saves succeed; and
 * `before` (BENCH_BEFORE_ROOT) failing the same way.
 */
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startNode, type Child } from './limiter/processes';

const QUICK = process.env['BENCH_QUICK'] === '1';
const SIZES = process.env['BENCH_KEYS']
  ? process.env['BENCH_KEYS'].split(',').map(Number)
  : QUICK
    ? [20_000]
    : [300_000, 1_000_000];
const PERIOD_MS = 5000;
const WINDOW_MS = QUICK ? 2 * PERIOD_MS : 3 * PERIOD_MS;
/** Share of the keys the traffic touches per save period. */
const TOUCH_SHARE = 0.1;
const BATCH = 1000;
/** Restarts per subject; the median is printed. */
const RESTARTS = 3;
const root = join(__dirname, '..');
const beforeRoot = process.env['BENCH_BEFORE_ROOT'];

const CONFIG = `quotas:
  - name: daily
    match: "user-*"
    limits:
      - { name: rpd, unit: requests, limit: 1000000, window: 1d, algorithm: fixed_window }
`;

interface Subject {
  readonly label: string;
  readonly root: string;
  readonly persist: boolean;
}

interface Outcome {
  fillS: number;
  loop: { p50: number; p99: number; max: number };
  probe: { p50: number; p99: number; max: number; count: number };
  rssMiB: number;
  bytesPerKey: number;
  saveMs: number;
  saves: number;
  sigtermMs: number;
  restartMs: number;
  restored: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function metrics(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const space = line.lastIndexOf(' ');
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
}

async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/healthz`)).ok;
  } catch {
    return false;
  }
}

function batchBody(keys: Iterable<number>): string {
  const requests = [];
  for (const k of keys) requests.push({ key: `user-${k}` });
  return JSON.stringify({ requests });
}

async function postBatch(url: string, body: string): Promise<void> {
  const res = await fetch(`${url}/v1/acquire/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

/** Acquires once for every key 0..n-1, 4 batches in flight. */
async function fill(url: string, n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < n) {
        const from = next;
        next = Math.min(n, next + BATCH);
        await postBatch(url, batchBody(range(from, next)));
      }
    }),
  );
}

function* range(from: number, to: number): Iterable<number> {
  for (let i = from; i < to; i++) yield i;
}

function* randomKeys(n: number, count: number): Iterable<number> {
  for (let i = 0; i < count; i++) yield Math.floor(Math.random() * n);
}

/** Until `stop`: batches of random keys at `perSecond` keys a second. */
async function touch(
  url: string,
  n: number,
  perSecond: number,
  stop: () => boolean,
): Promise<void> {
  const started = performance.now();
  let sent = 0;
  while (!stop()) {
    const due = ((performance.now() - started) / 1000) * perSecond;
    if (sent + BATCH <= due) {
      await postBatch(url, batchBody(randomKeys(n, BATCH)));
      sent += BATCH;
    } else {
      await sleep(10);
    }
  }
}

/** Back-to-back GET /healthz round trips until `stop`, in ms. */
async function probe(url: string, stop: () => boolean): Promise<number[]> {
  const samples: number[] = [];
  while (!stop()) {
    const started = performance.now();
    const res = await fetch(`${url}/healthz`);
    await res.arrayBuffer();
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}

const at = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;

async function startLimiter(subject: Subject, port: number, dir: string): Promise<Child> {
  const url = `http://127.0.0.1:${port}`;
  return startNode(
    [join(subject.root, 'dist', 'apps', 'limiter', 'main.js')],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      NATS_URL: '',
      CONFIG_FILE: join(dir, 'limits.yaml'),
      // Persistence off: a data directory that cannot be created (below a plain file).
      DATA_DIR: join(dir, subject.persist ? 'data' : 'limits.yaml/data'),
      LOG_LEVEL: 'error',
    },
    () => healthy(url),
    120_000,
  );
}

/** Fills, measures a window of saves, then SIGTERM; the data directory is kept for restarts. */
async function run(
  subject: Subject,
  n: number,
  dir: string,
): Promise<Omit<Outcome, 'restartMs' | 'restored'>> {
  writeFileSync(join(dir, 'limits.yaml'), CONFIG);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const limiter = await startLimiter(subject, port, dir);
  try {
    const filling = performance.now();
    await fill(url, n);
    const fillS = (performance.now() - filling) / 1000;
    if (subject.persist) {
      // Start the window once a save that began after the fill has completed.
      const filled = Date.now() / 1000;
      const deadline = Date.now() + 300_000;
      const saved = async (): Promise<boolean> =>
        ((await metrics(url)).get('ratelimit_persistence_last_write_timestamp_seconds') ?? 0) >=
        filled;
      while (!(await saved())) {
        if (Date.now() > deadline) throw new Error(`${subject.label}: no save within 300 s`);
        // A save writes only when something changed: touch one key.
        await postBatch(url, batchBody([0]));
        await sleep(500);
      }
    }
    const before = await metrics(url); // also resets the limiter's event-loop histogram
    let stopped = false;
    const stop = (): boolean => stopped;
    const traffic = touch(url, n, (n * TOUCH_SHARE) / (PERIOD_MS / 1000), stop);
    const probing = probe(url, stop);
    await sleep(WINDOW_MS);
    const after = await metrics(url);
    stopped = true;
    const [samples] = await Promise.all([probing, traffic]);
    const ms = (name: string): number => (after.get(name) ?? NaN) * 1000;
    const rss = after.get('process_resident_memory_bytes') ?? NaN;
    const saves =
      (after.get('ratelimit_persistence_writes_total{result="ok"}') ?? 0) -
      (before.get('ratelimit_persistence_writes_total{result="ok"}') ?? 0);

    const signalled = performance.now();
    const code = await limiter.stop();
    const sigtermMs = performance.now() - signalled;
    if (code !== 0) throw new Error(`${subject.label}: exit ${code}\n${limiter.output()}`);
    return {
      fillS,
      loop: {
        p50: ms('nodejs_eventloop_lag_p50_seconds'),
        p99: ms('nodejs_eventloop_lag_p99_seconds'),
        max: ms('nodejs_eventloop_lag_max_seconds'),
      },
      probe: {
        p50: at(samples, 0.5),
        p99: at(samples, 0.99),
        max: at(samples, 1),
        count: samples.length,
      },
      rssMiB: rss / 2 ** 20,
      bytesPerKey: rss / n,
      saveMs: ms('ratelimit_persistence_last_write_duration_seconds'),
      saves,
      sigtermMs,
    };
  } finally {
    await limiter.stop();
  }
}

/** Start until /healthz answers (usage is restored before the server listens), then SIGTERM. */
async function restart(subject: Subject, dir: string): Promise<{ ms: number; restored: boolean }> {
  const port = await freePort();
  const starting = performance.now();
  const limiter = await startLimiter(subject, port, dir);
  const ms = performance.now() - starting;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/v1/stats/user-0`);
    const stats = (await res.json()) as { limits: { used: number }[] };
    return { ms, restored: (stats.limits[0]?.used ?? 0) > 0 };
  } finally {
    await limiter.stop();
  }
}

/** The floor of writing N rows: one transaction of raw upserts, then one period's share. */
function rawUpserts(n: number): { allMs: number; shareMs: number } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-persistence-raw-'));
  const db = new Database(join(dir, 'raw.sqlite'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE key_state (quota TEXT NOT NULL, key TEXT NOT NULL,
      layout INTEGER NOT NULL, state BLOB NOT NULL, leases TEXT, taken_at INTEGER NOT NULL,
      idle_at INTEGER NOT NULL, PRIMARY KEY (quota, key)) STRICT, WITHOUT ROWID`);
    const upsert = db.prepare(`INSERT INTO key_state VALUES (?, ?, 1, ?, NULL, ?, ?)
      ON CONFLICT (quota, key) DO UPDATE SET state = excluded.state, taken_at = excluded.taken_at,
        idle_at = excluded.idle_at`);
    const state = Buffer.from(new Float64Array(6).buffer);
    const write = db.transaction((keys: Iterable<number>, now: number) => {
      for (const k of keys) upsert.run('daily', `user-${k}`, state, now, now + 86_400_000);
    });
    let started = performance.now();
    write(range(0, n), Date.now());
    const allMs = performance.now() - started;
    started = performance.now();
    write(randomKeys(n, Math.round(n * TOUCH_SHARE)), Date.now());
    return { allMs, shareMs: performance.now() - started };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const f = (v: number, digits = 0): string => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');

/** Every write to the usage file fails from now on, as on a full disk. */
function failWrites(dataDir: string): void {
  const db = new Database(join(dataDir, 'limiter.sqlite'));
  try {
    for (const op of ['INSERT', 'UPDATE']) {
      db.exec(`CREATE TRIGGER full_${op} BEFORE ${op} ON key_state
        BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
    }
  } finally {
    db.close();
  }
}

/** Fills n keys, waits for them to be saved, then (failing) makes every write fail; idle CPU. */
async function idleCpu(
  subject: Subject,
  n: number,
  dir: string,
  failing: boolean,
): Promise<{ cpuMsPerS: number; failed: number }> {
  writeFileSync(join(dir, 'limits.yaml'), CONFIG);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const limiter = await startLimiter(subject, port, dir);
  try {
    await fill(url, n);
    const filled = Date.now() / 1000;
    const lastWrite = async (): Promise<number> =>
      (await metrics(url)).get('ratelimit_persistence_last_write_timestamp_seconds') ?? 0;
    while ((await lastWrite()) < filled) {
      await postBatch(url, batchBody([0])); // a save writes only when something changed
      await sleep(500);
    }
    if (failing) failWrites(join(dir, 'data'));
    await postBatch(url, batchBody([0])); // one key changed: the next save has a row to write
    await sleep(PERIOD_MS); // that save ran (and failed)
    const before = await metrics(url);
    const started = performance.now();
    await sleep(WINDOW_MS);
    const after = await metrics(url);
    const cpu = 'process_cpu_seconds_total';
    const failures = 'ratelimit_persistence_writes_total{result="failed"}';
    return {
      cpuMsPerS: ((after.get(cpu)! - before.get(cpu)!) * 1e6) / (performance.now() - started),
      failed: after.get(failures) ?? 0,
    };
  } finally {
    await limiter.stop();
  }
}

async function failedSaves(subjects: readonly Subject[]): Promise<void> {
  const n = SIZES[0] === 300_000 && !process.env['BENCH_KEYS'] ? 200_000 : SIZES[0]!;
  const runs: [string, Subject, boolean][] = [
    ['saving (peer)', subjects.find((s) => s.label === 'after')!, false],
    ...subjects.filter((s) => s.persist).map((s): [string, Subject, boolean] => [s.label, s, true]),
  ];
  console.log(
    `\n${n.toLocaleString('en')} keys saved, then idle over ${WINDOW_MS / 1000} s; ` +
      'every write fails (full disk) but for the peer\n',
  );
  console.log('| subject | saves fail | CPU ms/s | failed saves |');
  console.log('|---|---|---:|---:|');
  const cpu = new Map<string, number>();
  for (const [label, subject, failing] of runs) {
    const dir = mkdtempSync(join(tmpdir(), 'bench-persistence-failing-'));
    try {
      const o = await idleCpu(subject, n, dir, failing);
      cpu.set(label, o.cpuMsPerS);
      console.log(`| ${label} | ${failing ? 'yes' : 'no'} | ${f(o.cpuMsPerS, 1)} | ${o.failed} |`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const peer = cpu.get('saving (peer)')!;
  for (const [label, ms] of cpu) {
    if (label !== 'saving (peer)')
      console.log(`${label}, failing: ${f(ms / peer, 1)}x the peer's CPU`);
  }
}

async function main(): Promise<void> {
  if (process.env['BENCH_SKIP_BUILD'] !== '1') {
    execFileSync('npx', ['nest', 'build', 'limiter'], { cwd: root, stdio: 'inherit' });
  }
  for (const r of [root, beforeRoot]) {
    if (r !== undefined && !existsSync(join(r, 'dist', 'apps', 'limiter', 'main.js'))) {
      throw new Error(`${r}: no build (npx nest build limiter there first)`);
    }
  }
  const subjects: Subject[] = [
    { label: 'off (peer)', root, persist: false },
    ...(beforeRoot === undefined ? [] : [{ label: 'before', root: beforeRoot, persist: true }]),
    { label: 'after', root, persist: true },
  ];
  if (process.env['BENCH_FAILED_SAVES'] === '1') return failedSaves(subjects);
  console.log(
    `node ${process.version}; ${cpus().length} cores shared by the load, the limiter and SQLite; ` +
      `traffic touches ${TOUCH_SHARE * 100} % of the keys per ${PERIOD_MS / 1000} s save period, ` +
      `measured over ${WINDOW_MS / 1000} s`,
  );
  for (const n of SIZES) {
    const raw = rawUpserts(n);
    console.log(
      `\n${n.toLocaleString('en')} keys — raw better-sqlite3 upserts: all ${f(raw.allMs)} ms, ` +
        `one period's share (${(n * TOUCH_SHARE).toLocaleString('en')}) ${f(raw.shareMs)} ms\n`,
    );
    console.log(
      '| subject | loop p50 ms | loop p99 ms | loop max ms | /healthz p50 ms | p99 ms | max ms | ' +
        'RSS MiB | bytes/key | last save ms | saves | SIGTERM ms | restart ms | restored |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
    const outcomes = new Map<string, Outcome>();
    const dirs = subjects.map(() => mkdtempSync(join(tmpdir(), 'bench-persistence-')));
    try {
      const runs = [];
      for (const [i, s] of subjects.entries()) runs.push(await run(s, n, dirs[i]!));
      // Restarts alternate between the subjects, round by round: the machine's load drifts.
      const restarts = subjects.map((): { ms: number; restored: boolean }[] => []);
      for (let round = 0; round < RESTARTS; round++) {
        for (const [i, s] of subjects.entries()) restarts[i]!.push(await restart(s, dirs[i]!));
      }
      for (const [i, s] of subjects.entries()) {
        const times = restarts[i]!.map((r) => r.ms).sort((a, b) => a - b);
        const o: Outcome = {
          ...runs[i]!,
          restartMs: times[times.length >> 1]!,
          restored: restarts[i]!.every((r) => r.restored),
        };
        outcomes.set(s.label, o);
        console.log(
          `| ${s.label} | ${f(o.loop.p50, 1)} | ${f(o.loop.p99, 1)} | ${f(o.loop.max, 1)} | ` +
            `${f(o.probe.p50, 2)} | ${f(o.probe.p99, 1)} | ${f(o.probe.max, 1)} | ${f(o.rssMiB)} | ` +
            `${f(o.bytesPerKey)} | ${f(o.saveMs)} | ${o.saves} | ${f(o.sigtermMs)} | ` +
            `${f(o.restartMs)} | ${s.persist ? String(o.restored) : '-'} |`,
        );
      }
    } finally {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
    const off = outcomes.get('off (peer)')!;
    for (const [label, o] of outcomes) {
      if (label === 'off (peer)') continue;
      console.log(
        `${label}: loop max ${f(o.loop.max / off.loop.max, 1)}x the peer's, /healthz max ` +
          `${f(o.probe.max / off.probe.max, 1)}x, RSS ${f(o.rssMiB / off.rssMiB, 2)}x, restart ` +
          `${f(o.restartMs / off.restartMs, 1)}x the peer's empty start, last save ` +
          `${f(o.saveMs / raw.shareMs, 1)}x the raw upsert of one period's share`,
      );
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
