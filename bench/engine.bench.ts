/**
 * npm run bench:engine — single-thread decisions/s of the engine, with rate-limiter-flexible's
 * RateLimiterMemory measured in the same run on the same key sets, and bytes per active key. The LLM
 * quota (three limits) is also set against three of the peer's limiters (bench/engine/llm-peers.ts).
 * Sliding windows small enough for an exact log are set against sub-buckets in the same run. Run
 * with --expose-gc for the memory figures. BENCH_QUICK=1 shortens every run (smoke test).
 * The memory kept for requestIds: RSS and heap after 1 000 000 acquires with a new id each, beside
 * the same without ids (bench/engine/id-memory.ts).
 */
import { execFileSync } from 'node:child_process';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { Engine, type Decision, type LimitSpec, type QuotaSpec } from '../libs/engine/src';
import { ID_ACQUIRES, idMemory, type IdMemory } from './engine/id-memory';
import { LLM_COST, threeConsumes, unionOfThree, type Take } from './engine/llm-peers';

const QUICK = process.env.BENCH_QUICK === '1';
const SECONDS = QUICK ? 0.1 : 1;
/** Timed rounds per figure; the figure is their median (this VM's neighbours make single runs noisy). */
const ROUNDS = 3;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
const gc = (globalThis as { gc?: () => void }).gc;

const HUGE = 1_000_000_000;
const limits: Record<string, LimitSpec[]> = {
  fixed_window: [
    { name: 'rps', unit: 'requests', limit: HUGE, windowMs: 1000, algorithm: 'fixed_window' },
  ],
  sliding_window: [
    { name: 'rps', unit: 'requests', limit: HUGE, windowMs: 1000, algorithm: 'sliding_window' },
  ],
  token_bucket: [
    { name: 'rps', unit: 'requests', limit: HUGE, windowMs: 1000, algorithm: 'token_bucket' },
  ],
  'rpm+tpm+rpd': [
    { name: 'rpm', unit: 'requests', limit: HUGE, windowMs: 60_000, algorithm: 'sliding_window' },
    {
      name: 'tpm',
      unit: 'tokens',
      limit: HUGE * 100,
      windowMs: 60_000,
      algorithm: 'sliding_window',
    },
    {
      name: 'rpd',
      unit: 'requests',
      limit: HUGE,
      windowMs: 86_400_000,
      algorithm: 'fixed_window',
      align: 'calendar',
      timezone: 'America/Los_Angeles',
    },
  ],
};

/** The LLM quota with an rpm of `rpm` (the tokens and the day as large as above). */
const llm = (rpm: number): LimitSpec[] =>
  limits['rpm+tpm+rpd']!.map((l) => (l.name === 'rpm' ? { ...l, limit: rpm } : l));
const perSecond = (limit: number): LimitSpec[] => [{ ...limits.sliding_window![0]!, limit }];

/**
 * Sliding windows small enough for the exact log (a log of requests up to 64; tokens under an
 * rpm up to 64), each beside the same window one step above the log, kept in sub-buckets.
 */
const logged: [log: string, buckets: string][] = [
  ['sliding_window, log of 64/s', 'sliding_window, sub-buckets (65/s)'],
  ['rpm+tpm+rpd, logs (rpm 50)', 'rpm+tpm+rpd, sub-buckets (rpm 65)'],
];
const smallQuotas: Record<string, LimitSpec[]> = {
  'sliding_window, log of 64/s': perSecond(64),
  'sliding_window, sub-buckets (65/s)': perSecond(65),
  'rpm+tpm+rpd, logs (rpm 50)': llm(50),
  'rpm+tpm+rpd, sub-buckets (rpm 65)': llm(65),
  'sliding_window, 10 per minute (log)': [
    { name: 'rpm', unit: 'requests', limit: 10, windowMs: 60_000, algorithm: 'sliding_window' },
  ],
};

/** GoCC's default: 100 requests per 1 s window; a hot key is then refused almost always. */
const GOCC_LIMIT = 100;

function quota(name: string): QuotaSpec {
  if (name === 'gocc') {
    return {
      name: 'default',
      limits: [{ ...limits.fixed_window![0]!, limit: GOCC_LIMIT }],
      clientOverrides: true,
    };
  }
  return { name: 'default', limits: limits[name] ?? smallQuotas[name]! };
}

function keySet(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `user-${i}`);
}

/** Median ops/s over ROUNDS rounds of SECONDS each; `batch` runs a batch of ops and returns its size. */
async function measure(batch: () => number | Promise<number>): Promise<number> {
  const rates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let done = 0;
    const start = process.hrtime.bigint();
    const budget = BigInt(Math.round(SECONDS * 1e9));
    while (process.hrtime.bigint() - start < budget) done += await batch();
    rates.push(done / (Number(process.hrtime.bigint() - start) / 1e9));
  }
  return median(rates);
}

/** Decisions per second of `engine.acquire` over `keys`, on the wall clock like the peer. */
async function engineRate(
  spec: QuotaSpec,
  keys: string[],
  cost: unknown,
  requestIds = false,
  ownLimit = false,
): Promise<number> {
  const engine = new Engine([spec], { shards: 25 });
  let id = 0;
  const c = cost as number | undefined;
  let now = Date.now();
  // GoCC's client override on every key: the same numbers, so the decisions are the quota's.
  if (ownLimit) for (const key of keys) engine.setKeyLimits({ key, limit: GOCC_LIMIT }, now);
  let admitted = 0;
  let decided = 0;
  let i = 0;
  // A server builds one input object per request; so does this loop.
  const batch = (): number => {
    for (let j = 0; j < 16_384; j++) {
      const key = keys[i++ % keys.length]!;
      const d = engine.acquire(
        requestIds ? { key, cost: c, requestId: `req-${id++}` } : { key, cost: c },
        now,
      ) as Decision;
      if (d.allowed) admitted++;
    }
    now = Date.now();
    engine.advance(now);
    decided += 16_384;
    return 16_384;
  };
  // Warm up: every key once, and the JIT.
  while (decided < Math.max(keys.length, 200_000)) batch();
  const rate = await measure(batch);
  if (admitted === 0) throw new Error('nothing admitted: benchmark misconfigured');
  if (admitted === decided && spec.limits[0]!.limit === GOCC_LIMIT && keys.length === 1) {
    throw new Error('nothing refused: benchmark misconfigured');
  }
  return rate;
}

/** The same loop through RateLimiterMemory; refusals reject, as its API does. */
async function flexibleRate(keys: string[], points: number): Promise<number> {
  const limiter = new RateLimiterMemory({ points, duration: 1 });
  return peerRate(keys, (key) => limiter.consume(key).catch((refused: unknown) => refused));
}

/** A peer's LLM quota of three limiters (limits as the engine's), on the same loop. */
async function llmPeerRate(keys: string[], make: (requestsLimit: number) => Take): Promise<number> {
  const take = make(HUGE);
  const rate = await peerRate(keys, take);
  // Checked after the run, not counted in it: counting would add work to the peer's loop.
  if (!(await take(keys[0]!))) throw new Error('peer refused: benchmark misconfigured');
  return rate;
}

/** Awaits `take` once per request, as a server's handler would. */
async function peerRate(keys: string[], take: (key: string) => Promise<unknown>): Promise<number> {
  let i = 0;
  const batch = async (): Promise<number> => {
    for (let j = 0; j < 1024; j++) await take(keys[i++ % keys.length]!);
    return 1024;
  };
  for (let n = 0; n < Math.min(keys.length, 200_000); n += 1024) await batch();
  return measure(batch);
}

/** Heap + typed-array bytes per key held by an engine with `n` active keys. */
function bytesPerKey(spec: QuotaSpec, n: number, ownLimit = false): number {
  if (!gc) return NaN;
  const now = Date.UTC(2026, 10, 21);
  gc();
  gc();
  const before = process.memoryUsage();
  const engine = new Engine([spec], { shards: 25, receiptCapacity: 64 });
  for (let i = 0; i < n; i++) {
    // A limit of its own, one of 64 different ones: shared by the keys that ask for the same.
    if (ownLimit) engine.setKeyLimits({ key: `member-${i}`, limit: 1 + (i % 64) }, now);
    engine.acquire({ key: `member-${i}` }, now);
  }
  gc();
  gc();
  const after = process.memoryUsage();
  const bytes = after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers);
  if (engine.footprint().keys !== n) throw new Error('keys missing');
  return bytes / n;
}

/** Heap bytes per parked waiter (its record, promise and cancel closure). */
function bytesPerWaiter(n: number): number {
  if (!gc) return NaN;
  const now = Date.UTC(2026, 10, 21);
  const spec: QuotaSpec = {
    name: 'default',
    limits: [
      { name: 'rph', unit: 'requests', limit: 1, windowMs: 3_600_000, algorithm: 'fixed_window' },
    ],
    queue: { maxSize: 1_000_000, maxWaitMs: 3_600_000 },
  };
  const engine = new Engine([spec], { shards: 25, receiptCapacity: 64 });
  const keys = 1000;
  for (let k = 0; k < keys; k++) engine.acquire({ key: `member-${k}` }, now);
  const handles = new Array<unknown>(n);
  gc();
  gc();
  const before = process.memoryUsage();
  for (let i = 0; i < n; i++)
    handles[i] = engine.acquire({ key: `member-${i % keys}`, wait: true }, now);
  gc();
  gc();
  const after = process.memoryUsage();
  if (engine.footprint().waiters !== n) throw new Error('waiters missing');
  return (after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers)) / n;
}

const fmt = (n: number): string =>
  Number.isNaN(n) ? 'n/a' : Math.round(n).toLocaleString('en-US');

const SETS: Record<string, number> = { a: 1, b: 100_000, c: QUICK ? 200_000 : 1_000_000 };
const SET_NAMES: Record<string, string> = {
  a: '(a) 1 hot key',
  b: '(b) 100 000 keys',
  c: '(c) 1 000 000 keys',
};

/** Runs one figure in this process (a child): prints one JSON number. */
async function figure(kind: string, set: string): Promise<void> {
  if (kind.startsWith('idmem:')) {
    const count = QUICK ? ID_ACQUIRES / 10 : ID_ACQUIRES;
    process.stdout.write(JSON.stringify(idMemory(kind === 'idmem:ids', count)));
    return;
  }
  const keys = keySet(SETS[set]!);
  let value: number;
  if (kind === 'waiter') value = bytesPerWaiter(QUICK ? 10_000 : 100_000);
  else if (kind === 'flexible') value = await flexibleRate(keys, HUGE);
  else if (kind === 'flexible:gocc') value = await flexibleRate(keys, GOCC_LIMIT);
  else if (kind === 'flexible:union') value = await llmPeerRate(keys, unionOfThree);
  else if (kind === 'flexible:three') value = await llmPeerRate(keys, threeConsumes);
  else if (kind === 'ids') value = await engineRate(quota('fixed_window'), keys, undefined, true);
  else if (kind === 'gocc:own')
    value = await engineRate(quota('gocc'), keys, undefined, false, true);
  else if (kind === 'bytes:gocc:own')
    value = bytesPerKey(quota('gocc'), QUICK ? 20_000 : 200_000, true);
  else if (kind.startsWith('bytes:'))
    value = bytesPerKey(quota(kind.slice(6)), QUICK ? 20_000 : 200_000);
  else
    value = await engineRate(
      quota(kind),
      keys,
      kind.startsWith('rpm+tpm+rpd') ? { ...LLM_COST } : undefined,
    );
  process.stdout.write(JSON.stringify(value));
}

/** Each figure gets a fresh process, so one figure's JIT and heap state cannot skew the next. */
function inChild(kind: string, set: string): number {
  return Number(childJson(kind, set));
}

function childJson(kind: string, set: string): unknown {
  const out = execFileSync(process.execPath, ['--expose-gc', __filename, kind, set], {
    env: process.env,
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out);
}

/** RSS and heap after the same acquires with and without a new requestId each. */
function printIdMemory(): void {
  const count = QUICK ? ID_ACQUIRES / 10 : ID_ACQUIRES;
  const plain = childJson('idmem:plain', 'a') as IdMemory;
  const ids = childJson('idmem:ids', 'a') as IdMemory;
  const mib = (bytes: number): string => (bytes / 1_048_576).toFixed(1);
  const perId = (ids.heap + ids.arrayBuffers - plain.heap - plain.arrayBuffers) / ids.remembered;
  console.log('');
  console.log(
    `Memory after ${fmt(count)} acquires (10 000 keys, 50 000/s of virtual time, all within the`,
  );
  console.log(
    `60 s window), each with a new requestId or none; ${fmt(perId)} bytes per remembered id:`,
  );
  console.log('');
  console.log(
    '| acquires | RSS, MiB | V8 heap used, MiB | typed arrays, MiB | ids remembered | heap 11 min later, MiB |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [label, m] of [
    ['without requestIds', plain],
    ['a new requestId each', ids],
  ] as const) {
    console.log(
      `| ${label} | ${mib(m.rss)} | ${mib(m.heap)} | ${mib(m.arrayBuffers)} | ${fmt(m.remembered)} | ${mib(m.laterHeap)} (${fmt(m.laterRemembered)} ids) |`,
    );
  }
  console.log(
    `| ratio | ${(ids.rss / plain.rss).toFixed(2)}x | ${(ids.heap / plain.heap).toFixed(2)}x | | | |`,
  );
}

/**
 * The rpm+tpm+rpd quota against what a rate-limiter-flexible user writes for three limits, with the
 * single-limiter row beside them. Each row measures the engine again just before its peer: on a
 * shared machine, a ratio of two figures measured seconds apart is steadier than one engine figure
 * shared by three rows.
 */
function printLlmPeers(): void {
  console.log('');
  console.log(
    'The LLM quota (rpm+tpm+rpd, all-or-nothing) against three rate-limiter-flexible limiters:',
  );
  console.log('');
  console.log('| peer | key set | engine rpm+tpm+rpd/s | peer/s | ratio |');
  console.log('|---|---|---:|---:|---:|');
  const peers: [string, string][] = [
    ['flexible', 'one RateLimiterMemory (one limit)'],
    ['flexible:union', 'RateLimiterUnion of three'],
    ['flexible:three', 'three awaited consume calls'],
  ];
  for (const set of ['a', 'b']) {
    for (const [kind, label] of peers) {
      const rate = inChild('rpm+tpm+rpd', set);
      const peer = inChild(kind, set);
      console.log(
        `| ${label} | ${SET_NAMES[set]} | ${fmt(rate)} | ${fmt(peer)} | ${(rate / peer).toFixed(2)}x |`,
      );
    }
  }
}

/** Sliding windows kept as an exact log, each against the same window in sub-buckets. */
function printLogged(): void {
  console.log('');
  console.log(
    'Sliding windows exact to the ms (a log), against one step larger, in sub-buckets of 1/10 window:',
  );
  console.log('');
  console.log('| quota | key set | log decisions/s | sub-buckets decisions/s | ratio |');
  console.log('|---|---|---:|---:|---:|');
  for (const set of ['a', 'b']) {
    for (const [log, buckets] of logged) {
      const rate = inChild(log, set);
      const peer = inChild(buckets, set);
      console.log(
        `| ${log} | ${SET_NAMES[set]} | ${fmt(rate)} | ${fmt(peer)} | ${(rate / peer).toFixed(2)}x |`,
      );
    }
  }
}

function main(): void {
  console.log(
    `node ${process.version}; a figure is the median of ${ROUNDS} rounds of ${SECONDS}s in a fresh process; 25 shards, one thread`,
  );
  console.log('');
  console.log('| quota | key set | engine decisions/s | rate-limiter-flexible/s | ratio |');
  console.log('|---|---|---:|---:|---:|');
  for (const set of ['a', 'b', 'c']) {
    const flexible = set === 'c' ? NaN : inChild('flexible', set);
    for (const algo of Object.keys(limits)) {
      const rate = inChild(algo, set);
      const ratio = Number.isNaN(flexible) ? '' : `${(rate / flexible).toFixed(2)}x`;
      console.log(`| ${algo} | ${SET_NAMES[set]} | ${fmt(rate)} | ${fmt(flexible)} | ${ratio} |`);
    }
  }
  printLlmPeers();
  console.log('');
  console.log(
    `GoCC's default limit (fixed_window, ${GOCC_LIMIT} per 1 s window per key): a hot key is refused`,
  );
  console.log(
    'almost always, which is what a rate limiter spends most of its time doing under overload.',
  );
  console.log('');
  console.log('| key set | engine decisions/s | rate-limiter-flexible/s | ratio |');
  console.log('|---|---:|---:|---:|');
  for (const set of ['a', 'b']) {
    const flexible = inChild('flexible:gocc', set);
    const rate = inChild('gocc', set);
    console.log(
      `| ${SET_NAMES[set]} | ${fmt(rate)} | ${fmt(flexible)} | ${(rate / flexible).toFixed(2)}x |`,
    );
  }
  console.log('');
  console.log(
    "GoCC's client override (maxRequests) on every key, at the same limit, so the decisions are",
  );
  console.log("the same: each key's own limit is looked up beside its waiters.");
  console.log('');
  console.log(
    '| key set | engine, quota limit/s | engine, own limit/s | own/quota | rate-limiter-flexible/s | own/peer |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const set of ['a', 'b']) {
    const flexible = inChild('flexible:gocc', set);
    const plain = inChild('gocc', set);
    const own = inChild('gocc:own', set);
    console.log(
      `| ${SET_NAMES[set]} | ${fmt(plain)} | ${fmt(own)} | ${(own / plain).toFixed(2)}x | ${fmt(flexible)} | ${(own / flexible).toFixed(2)}x |`,
    );
  }
  console.log('');
  console.log(
    'A client that sends a new requestId with every request (fixed_window): each id is remembered',
  );
  console.log('(bounded: idempotencyCapacity ids per shard, answers and receipt links alike).');
  console.log('');
  console.log('| key set | without requestIds/s | a new requestId each/s | ratio |');
  console.log('|---|---:|---:|---:|');
  for (const set of ['a', 'b']) {
    const plain = inChild('fixed_window', set);
    const ids = inChild('ids', set);
    console.log(
      `| ${SET_NAMES[set]} | ${fmt(plain)} | ${fmt(ids)} | ${(ids / plain).toFixed(2)}x |`,
    );
  }
  printIdMemory();
  printLogged();
  console.log('');
  console.log(`| quota | bytes per active key (${QUICK ? '20 000' : '200 000'} keys) |`);
  console.log('|---|---:|');
  for (const algo of [...Object.keys(limits), ...Object.keys(smallQuotas)])
    console.log(`| ${algo} | ${fmt(inChild(`bytes:${algo}`, 'a'))} |`);
  console.log(`| gocc, every key its own limit | ${fmt(inChild('bytes:gocc:own', 'a'))} |`);
  console.log('');
  console.log(
    `A parked waiter (wait: true) costs ${fmt(inChild('waiter', 'a'))} bytes of heap, no thread.`,
  );
}

const [kind, set] = process.argv.slice(2);
if (kind !== undefined && set !== undefined) {
  figure(kind, set).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main();
}
