/**
 * npm run bench:hostile — the limiter under hostile clients (issue 11 points 4 and 5), each figure
 * beside its peer in the same run:
 *   (4a) slow-body clients (a body of 1 000 bytes, one byte every 5 s) still connected 15 s after
 *        they started, 20 and 1 000 of them, out of those opened;
 *   (4b) SIGTERM to exit with 20 and 1 000 such clients in flight, beside an idle limiter's;
 *   (5)  p50/p99 of normal acquires at a fixed rate, HTTP and NATS, while 8 clients send 1 MiB
 *        bodies of nested arrays (and, over HTTP, of shallow arrays side by side), beside the same
 *        load while 8 clients send 1 MiB bodies of one string (as much data, cheap to parse), and
 *        alone; median of 3 rounds, the three alternating;
 *   (5c) parseJsonBody of a small acquire, beside the bare decode and JSON.parse it wraps;
 * and the h2c attacks of issue 25 (bench/hostile/h2c-attacks.ts):
 *   (6)  8 connections with a flow-control window of 0, 128 streams each of `GET /debug?limit=1000`
 *        (1 000 keys held), a PING every 2 s for 60 s: the limiter's peak and final RSS beside
 *        its RSS before, and how many connections it closed (when the last one);
 *   (7)  the HTTP/2 preface and a SETTINGS frame sent one byte every 1.5 s with
 *        HTTP_REQUEST_TIMEOUT_MS=2000: how long the connection is held, beside an HTTP/1.1 head
 *        sent the same way.
 * The limiter runs from its sources in LIMITER_ROOT (default: this checkout), so the same script
 * measures an older checkout for "before" figures. BENCH_QUICK=1 shortens every run;
 * BENCH_PARTS=4, =5, =6 or =7 (or a comma list) runs only those figures.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { parseJsonBody } from '../libs/contracts/src/validation/json-body';
import { holdKeys, prefaceSlowloris, unreadAnswers } from './hostile/h2c-attacks';
import { openRaw, requestHead, headRead, type RawConnection } from '../test/support/raw-http';
import { openLoop, type Latency } from './limiter/nats-load';
import { freePort, startNode, type Child } from './limiter/processes';

const QUICK = process.env.BENCH_QUICK === '1';
const PARTS = (process.env.BENCH_PARTS ?? '4,5,6,7').split(',');
/** A normal request unanswered this long counts as lost. */
const REQUEST_TIMEOUT_MS = 10_000;
const ROOT = process.env.LIMITER_ROOT ?? join(__dirname, '..');
const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
const SLOW_COUNTS = QUICK ? [20] : [20, 1000];
const HELD_AFTER_MS = 15_000;
const SIGTERM_CAP_MS = 60_000;
const LOAD_SECONDS = QUICK ? 2 : 8;
const ROUNDS = QUICK ? 1 : 3;
const HTTP_RATE = 200;
const NATS_RATE = 500;
const FLOODERS = 8;

const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : 'lost');
const s = (n: number): string => `${(n / 1000).toFixed(1)} s`;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

interface Limiter {
  readonly child: Child;
  readonly port: number;
  readonly url: string;
  readonly prefix: string;
}

async function startLimiter(env: Record<string, string> = {}): Promise<Limiter> {
  const port = await freePort();
  const prefix = `bench.${randomUUID().replaceAll('-', '')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'limiter-hostile-'));
  const url = `http://127.0.0.1:${port}`;
  const child = await startNode(
    ['-r', '@swc-node/register', join(ROOT, 'apps', 'limiter', 'src', 'main.ts')],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `bench-${randomUUID()}`,
      MAX_REQUESTS: '1000000000',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...env,
    },
    async () => (await fetch(`${url}/readyz`)).ok,
    60_000,
    ROOT,
  );
  child.process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  return { child, port, url, prefix };
}

/** A body of 1 000 bytes, one byte every 5 s, once the limiter has read the request's head. */
async function slowClient(port: number): Promise<RawConnection> {
  const client = await openRaw(port, requestHead('POST', '/v1/acquire', 1000));
  await headRead(client, 60_000);
  client.write('{');
  client.trickle(5_000);
  return client;
}

async function openSlow(port: number, n: number): Promise<RawConnection[]> {
  const clients: RawConnection[] = [];
  // In groups, so that 1 000 connections do not all dial in the same instant.
  for (let i = 0; i < n; i += 50) {
    const group = Array.from({ length: Math.min(50, n - i) }, () => slowClient(port));
    clients.push(...(await Promise.all(group)));
  }
  return clients;
}

/** (4a): how many of `n` slow clients are still connected HELD_AFTER_MS after they started. */
async function heldAfter(n: number): Promise<number> {
  const limiter = await startLimiter();
  try {
    const clients = await openSlow(limiter.port, n);
    await new Promise((r) => setTimeout(r, HELD_AFTER_MS));
    const held = clients.filter((c) => !c.socket.destroyed).length;
    for (const c of clients) c.destroy();
    return held;
  } finally {
    await stopWithin(limiter, SIGTERM_CAP_MS);
  }
}

/** SIGTERM; the time to exit, or Infinity past `capMs` (then SIGKILL). */
async function stopWithin(limiter: Limiter, capMs: number): Promise<number> {
  const proc = limiter.child.process;
  if (proc.exitCode !== null) return 0;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const started = Date.now();
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), capMs);
  await exited;
  clearTimeout(timer);
  const took = Date.now() - started;
  return took >= capMs ? Infinity : took;
}

/** (4b): SIGTERM to exit with `n` slow clients in flight (0: idle, the peer). */
async function sigtermWith(n: number): Promise<number> {
  const limiter = await startLimiter();
  const clients = await openSlow(limiter.port, n);
  const took = await stopWithin(limiter, SIGTERM_CAP_MS);
  for (const c of clients) c.destroy();
  return took;
}

/** Normal HTTP acquires at `rate`/s for `seconds`, open loop, each request's latency (ms). */
async function httpOpenLoop(url: string, rate: number, seconds: number): Promise<Latency> {
  const total = Math.floor(rate * seconds);
  const latency = new Float64Array(total).fill(Infinity);
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const sentAt = performance.now();
    pending.push(
      fetch(`${url}/v1/acquire`, {
        method: 'POST',
        body: JSON.stringify({ key: `normal-${i % 1000}` }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      })
        .then(async (res) => {
          await res.arrayBuffer();
          if (res.ok) latency[i] = performance.now() - sentAt;
        })
        .catch(() => undefined),
    );
  }
  await Promise.all(pending);
  const sorted = latency.sort();
  const at = (q: number): number => sorted[Math.min(total - 1, Math.floor(q * total))]!;
  return { p50: at(0.5), p99: at(0.99), sent: total, answered: sorted.filter(isFinite).length };
}

async function flood(args: string[]): Promise<Child> {
  return startNode(
    ['-r', '@swc-node/register', join(__dirname, 'hostile', 'flood.ts'), ...args],
    {},
    (out) => out.includes('ready'),
  );
}

interface LoadCase {
  readonly label: string;
  readonly measure: () => Promise<Latency>;
  /** The flood's arguments but its body kind. */
  readonly target: string[];
  readonly kinds: string[];
}

type Row = [label: string, alone: Latency, byKind: Map<string, Latency>];

/** (5): each case alone and under each flood, alternating round by round; medians. */
async function underFlood(cases: LoadCase[], done: (row: Row) => void): Promise<void> {
  const pick = (all: Latency[]): Latency => ({
    p50: median(all.map((l) => l.p50)),
    p99: median(all.map((l) => l.p99)),
    sent: median(all.map((l) => l.sent)),
    answered: median(all.map((l) => l.answered)),
  });
  for (const c of cases) {
    const alone: Latency[] = [];
    const flooded = new Map<string, Latency[]>(c.kinds.map((k) => [k, []]));
    await c.measure(); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      alone.push(await c.measure());
      for (const kind of c.kinds) {
        const flooders = await flood([...c.target, kind, String(FLOODERS)]);
        try {
          flooded.get(kind)!.push(await c.measure());
        } finally {
          await flooders.stop();
        }
      }
    }
    done([c.label, pick(alone), new Map([...flooded].map(([k, v]) => [k, pick(v)]))]);
  }
}

/** (5c): ns per call of `f` on `body`, best of 5 runs. */
function nsPerCall(f: (body: Buffer) => unknown, body: Buffer, n: number): number {
  let best = Infinity;
  for (let run = 0; run < 5; run++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) f(body);
    best = Math.min(best, Number(process.hrtime.bigint() - started) / n);
  }
  return best;
}

async function main(): Promise<void> {
  const lines: string[] = [
    `node ${process.version}; ${cpus().length} cores shared by the clients, the limiter and nats-server`,
    `limiter: ${ROOT}`,
    '',
    '| figure | measured | peer | peer is | ratio |',
    '|---|---:|---:|---|---:|',
  ];
  const print = (line: string): void => {
    lines.push(line);
    process.stderr.write(`${line}\n`);
  };

  if (PARTS.includes('4')) await slowClients(print);
  if (PARTS.includes('5')) await hostileBodies(print);
  if (PARTS.includes('6')) await unreadH2c(print);
  if (PARTS.includes('7')) await slowPreface(print);
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function slowClients(print: (line: string) => void): Promise<void> {
  for (const n of SLOW_COUNTS) {
    const held = await heldAfter(n);
    print(
      `| (4a) slow-body clients still connected after ${HELD_AFTER_MS / 1000} s | ${held} | ${n} | opened | ${(held / n).toFixed(2)} |`,
    );
  }
  const idle = await sigtermWith(0);
  for (const n of SLOW_COUNTS) {
    const took = await sigtermWith(n);
    const shown = Number.isFinite(took) ? s(took) : `> ${s(SIGTERM_CAP_MS)} (killed)`;
    const ratio = Number.isFinite(took) ? `${(took / idle).toFixed(1)}x` : '';
    print(
      `| (4b) SIGTERM to exit, ${n} slow-body clients in flight | ${shown} | ${s(idle)} | no client | ${ratio} |`,
    );
  }
}

async function hostileBodies(print: (line: string) => void): Promise<void> {
  const limiter = await startLimiter();
  const nc: NatsConnection = await connect({ servers: NATS_URL, name: 'bench-hostile' });
  try {
    const natsPayloads = Array.from({ length: 1000 }, (_, i) =>
      Buffer.from(JSON.stringify({ key: `normal-${i}` })),
    );
    const acquire = `${limiter.prefix}.acquire`;
    const what: Record<string, string> = {
      deep: '1 MiB of nested arrays',
      wide: '1 MiB of [[]],[[]],…',
    };
    const report = ([label, alone, byKind]: Row): void => {
      const peer = byKind.get('string')!;
      print(`| (5) ${label}, p50 / p99 ms, alone | ${ms(alone.p50)} / ${ms(alone.p99)} | | | |`);
      for (const [kind, flooded] of byKind) {
        if (kind === 'string') continue;
        const lost = flooded.sent - flooded.answered;
        print(
          `| (5) ${label}, p50 / p99 ms, ${FLOODERS} clients sending ${what[kind]}${lost > 0 ? ` (${lost} of ${flooded.sent} unanswered)` : ''} | ${ms(flooded.p50)} / ${ms(flooded.p99)} | ${ms(peer.p50)} / ${ms(peer.p99)} | ${FLOODERS} clients sending 1 MiB of one string | ${Number.isFinite(flooded.p99) ? `${(flooded.p99 / peer.p99).toFixed(1)}x (p99)` : 'p99 lost'} |`,
        );
      }
    };
    await underFlood(
      [
        {
          label: `HTTP /v1/acquire at ${HTTP_RATE}/s`,
          measure: () => httpOpenLoop(limiter.url, HTTP_RATE, LOAD_SECONDS),
          target: ['http', `${limiter.url}/v1/acquire`],
          kinds: ['deep', 'wide', 'string'],
        },
        {
          label: `NATS acquire at ${NATS_RATE}/s`,
          measure: () => openLoop(nc, acquire, natsPayloads, NATS_RATE, LOAD_SECONDS),
          target: ['nats', NATS_URL, acquire],
          kinds: ['deep', 'string'],
        },
      ],
      report,
    );
  } finally {
    await nc.close();
    await stopWithin(limiter, SIGTERM_CAP_MS);
  }

  const small = Buffer.from(
    JSON.stringify({ key: 'user-12345', quota: 'api', cost: { requests: 1, tokens: 1500 } }),
  );
  const bare = (body: Buffer): unknown => JSON.parse(body.toString('utf8'));
  const calls = QUICK ? 100_000 : 1_000_000;
  nsPerCall(parseJsonBody, small, calls);
  nsPerCall(bare, small, calls);
  const guarded = nsPerCall(parseJsonBody, small, calls);
  const plain = nsPerCall(bare, small, calls);
  print(
    `| (5c) parseJsonBody of a ${small.length}-byte acquire, ns (this checkout) | ${guarded.toFixed(0)} | ${plain.toFixed(0)} | toString + JSON.parse | ${(guarded / plain).toFixed(2)}x |`,
  );
}

async function unreadH2c(print: (line: string) => void): Promise<void> {
  const limiter = await startLimiter({ WINDOW_MILLIS: '3600000' });
  try {
    await holdKeys(limiter.url, 1000);
    const pid = limiter.child.process.pid!;
    const f = await unreadAnswers(limiter.port, pid, { holdMs: QUICK ? 20_000 : 60_000 });
    const mib = (n: number): string => `${n.toFixed(0)} MiB`;
    print(
      `| (6) RSS, 8 h2c connections x 128 unread \`/debug?limit=1000\`, PINGs, peak | ${mib(f.peakMiB)} | ${mib(f.idleMiB)} | before the attack | ${(f.peakMiB / f.idleMiB).toFixed(1)}x |`,
    );
    print(
      `| (6) RSS at the end, connections closed by the limiter | ${mib(f.endMiB)}, ${f.closed} of ${f.opened} closed${f.closed > 0 ? ` (the last at ${s(f.lastClosedMs)})` : ''} | ${mib(f.idleMiB)} | before the attack | ${(f.endMiB / f.idleMiB).toFixed(1)}x |`,
    );
  } finally {
    await stopWithin(limiter, SIGTERM_CAP_MS);
  }
}

async function slowPreface(print: (line: string) => void): Promise<void> {
  const limiter = await startLimiter({ HTTP_REQUEST_TIMEOUT_MS: '2000' });
  try {
    const capMs = 60_000;
    const { h2, http1 } = await prefaceSlowloris(limiter.port, 1_500, capMs);
    const shown = (n: number): string => (Number.isFinite(n) ? s(n) : `> ${s(capMs)}`);
    print(
      `| (7) connection held by a preface sent a byte every 1.5 s (timeout 2 s) | ${shown(h2)} | ${shown(http1)} | an HTTP/1.1 head the same way | ${Number.isFinite(h2) ? `${(h2 / http1).toFixed(1)}x` : ''} |`,
    );
  } finally {
    await stopWithin(limiter, SIGTERM_CAP_MS);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
