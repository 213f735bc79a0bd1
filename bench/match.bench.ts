/**
 * npm run bench:match — quota resolution by `match` pattern: the engine's resolver (RE2 through
 * re2js for `re:`, a greedy scan for globs) beside V8's backtracking RegExp, which the resolver
 * used before (the peer, same keys, same run). Keys are all distinct, so every resolution misses
 * the resolver's per-key cache: the worst case for the hot path. Then the hostile pairs: the peer
 * on short keys (it doubles per character), the engine on 256-character keys. Then the cost of
 * a new key among 10, 1 000 and 60 000 globs: the resolver's pattern index beside the linear scan
 * it replaced (issue 25). Then the event-loop delay while the limiter reloads a file of 60 000
 * globs, beside the reload as it was (bench/match/reload-figure.ts). BENCH_QUICK=1 shortens every
 * run (smoke test).
 */
import { Engine, type QuotaSpec } from '../libs/engine/src';
import { linearResolution } from '../libs/engine/src/quota/linear-resolution.test-util';
import { reloadFigure } from './match/reload-figure';

const QUICK = process.env.BENCH_QUICK === '1';
const KEYS = QUICK ? 20_000 : 400_000;
const ROUNDS = 3;

const rps = [
  { name: 'rps', unit: 'requests', limit: 10, windowMs: 1000, algorithm: 'fixed_window' as const },
];

/** The resolver's matching before: `re:` on RegExp(u), globs as ^…$ with `.*` per star. */
function backtrackingTest(match: string): (key: string) => boolean {
  if (match.startsWith('re:')) {
    const re = new RegExp(match.slice(3), 'u');
    return (key) => re.test(key);
  }
  const body = match
    .split('*')
    .map((part) => part.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'))
    .join('.*');
  const re = new RegExp(`^${body}$`, 's');
  return (key) => re.test(key);
}

/** Operations per second over `keys`, the median of ROUNDS. */
function rate(keys: readonly string[], resolve: (key: string) => unknown): number {
  const rates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    for (const key of keys) resolve(key);
    rates.push(keys.length / (Number(process.hrtime.bigint() - started) / 1e9));
  }
  return rates.sort((a, b) => a - b)[1]!;
}

function millis(run: () => unknown): number {
  const started = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US').replaceAll(',', ' ');

function throughput(): void {
  const cases: { what: string; match: string; key: (i: number) => string }[] = [
    { what: 'regex `re:^user-[0-9]+$`', match: 're:^user-[0-9]+$', key: (i) => `user-${i}` },
    { what: 'glob `api-*`', match: 'api-*', key: (i) => `api-${i}` },
    { what: 'glob `*-beta-*`', match: '*-beta-*', key: (i) => `k${i}-beta-x` },
  ];
  console.log('| match | keys | engine resolutions/s | V8 RegExp (before) /s | engine / before |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const c of cases) {
    const quotas: QuotaSpec[] = [
      { name: 'default', limits: rps },
      { name: 'matched', match: c.match, limits: rps },
    ];
    const engine = new Engine(quotas, { shards: 1 });
    const test = backtrackingTest(c.match);
    const keys = Array.from({ length: KEYS }, (_, i) => c.key(i));
    // The peer gets a per-key cache of the same size and policy as the resolver's.
    const cache = new Map<string, string>();
    const before = (key: string): string => {
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
      const found = test(key) ? 'matched' : 'default';
      if (cache.size >= 10_000) cache.clear();
      cache.set(key, found);
      return found;
    };
    if (engine.resolve(undefined, keys[0]!)?.name !== 'matched' || before(keys[0]!) !== 'matched') {
      throw new Error(`${c.what}: the keys do not match`);
    }
    const after = rate(keys, (key) => engine.resolve(undefined, key));
    const peer = rate(keys, before);
    console.log(
      `| ${c.what} | ${fmt(KEYS)} distinct | ${fmt(after)} | ${fmt(peer)} | ${(after / peer).toFixed(2)} |`,
    );
  }
}

function hostile(): void {
  console.log(
    '\n| pattern | key | engine, 50 keys of 207..256 chars: mean / max ms | V8 RegExp (before) ms |',
  );
  console.log('| --- | --- | --- | --- |');
  const pairs: { match: string; key: (n: number) => string; peerLengths: number[] }[] = [
    {
      match: 're:^(a+)+$',
      key: (n) => `${'a'.repeat(n - 1)}!`,
      peerLengths: QUICK ? [20] : [22, 24, 26],
    },
    {
      match: `*${'a*'.repeat(4)}b`,
      key: (n) => 'a'.repeat(n),
      peerLengths: QUICK ? [40] : [40, 60, 80],
    },
  ];
  for (const p of pairs) {
    const engine = new Engine(
      [
        { name: 'default', limits: rps },
        { name: 'hostile', match: p.match, limits: rps },
      ],
      { shards: 1 },
    );
    // Warm both up (V8 interprets a regex on its first run), then distinct keys, so the
    // resolver's cache never answers.
    engine.resolve(undefined, p.key(8));
    const test = backtrackingTest(p.match);
    test(p.key(8));
    const times = Array.from({ length: 50 }, (_, i) =>
      millis(() => engine.resolve(undefined, p.key(207 + i))),
    );
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    const peer = p.peerLengths.map(
      (n) => `${millis(() => test(p.key(n))).toFixed(0)} (${n} chars)`,
    );
    console.log(
      `| \`${p.match}\` | ${p.key(8)}… | ${mean.toFixed(3)} / ${Math.max(...times).toFixed(2)} | ${peer.join(', ')} |`,
    );
  }
}

/** Mean µs per call of `resolve` over `keys`, the median of ROUNDS. */
function micros(keys: readonly string[], resolve: (key: string) => unknown): number {
  return 1e6 / rate(keys, resolve);
}

/**
 * A new key among N globs `tenant-<id>-*` (the file: 60 000 of them), and among 1 000
 * `re:` patterns with no literal head, which the index cannot narrow: the resolver (its index
 * past 8 patterns) beside the linear scan it replaced, the same keys, none cached.
 */
function indexed(): void {
  console.log(
    '\n| patterns | key | resolver µs/key | linear scan (before) µs/key | scan / resolver |',
  );
  console.log('| --- | --- | --- | --- | --- |');
  const sizes = QUICK ? [10, 1_000, 10_000] : [10, 1_000, 60_000];
  const id = (i: number): string => String(i).padStart(6, '0');
  const cases = sizes.map((n) => ({
    what: `${fmt(n)} globs \`tenant-<id>-*\``,
    quotas: Array.from({ length: n }, (_, i) => ({
      name: `t${id(i)}`,
      match: `tenant-${id(i)}-*`,
    })),
    keys: [
      { what: 'matched', key: (i: number) => `tenant-${id((i * 7919) % n)}-${i}` },
      { what: 'unmatched', key: (i: number) => `other-${i}` },
    ],
  }));
  cases.push({
    what: '1 000 `re:-<id>$`',
    quotas: Array.from({ length: 1_000 }, (_, i) => ({
      name: `r${id(i)}`,
      match: `re:-${id(i)}$`,
    })),
    keys: [{ what: 'unmatched', key: (i: number) => `other-${i}` }],
  });
  for (const c of cases) {
    const quotas: QuotaSpec[] = [
      { name: 'default', limits: rps },
      ...c.quotas.map((q) => ({ ...q, limits: rps })),
    ];
    const engine = new Engine(quotas, { shards: 1 });
    const scan = linearResolution(quotas);
    for (const k of c.keys) {
      const key0 = k.key(0);
      if (engine.resolve(undefined, key0)?.name !== scan(key0)) {
        throw new Error(`${c.what}: the index and the scan disagree on ${key0}`);
      }
      // Fewer keys for the scan: it takes milliseconds per key at 60 000 patterns.
      const scanKeys = Math.min(KEYS, Math.max(200, Math.round(2e6 / quotas.length)));
      const index = micros(
        Array.from({ length: KEYS }, (_, i) => k.key(i + 1)),
        (key) => engine.resolve(undefined, key),
      );
      const linear = micros(
        Array.from({ length: scanKeys }, (_, i) => k.key(i + 1)),
        scan,
      );
      console.log(
        `| ${c.what} | ${k.what} | ${index.toFixed(2)} | ${linear.toFixed(2)} | ${(linear / index).toFixed(1)} |`,
      );
    }
  }
}

throughput();
hostile();
indexed();
reloadFigure(QUICK ? 3_000 : 60_000, QUICK ? 2_000 : 10_000).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
