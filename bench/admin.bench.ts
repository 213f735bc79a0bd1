/**
 * npm run bench:admin — what hostile GraphQL queries cost the admin, and what they cost everyone
 * else (issue 11 point 7). A real admin process (started from sources, fresh SQLite, no NATS)
 * holding BENCH_QUOTAS quotas (default 50). In one run:
 *
 * - one flood: 4 999 aliases of `quotas { name }` (just under the complexity limit the admin had
 *   before the issue): its answer (data, or the error code), how long it took, the admin's RSS
 *   before it and at its peak;
 * - the peer: a normal console query (`quotas { name match version }`) sent back to back, alone,
 *   p50/p99/max;
 * - the same normal query while 3 clients send the flood back to back;
 * - the same normal query while 3 clients send back to back a heavy query that the limits admit
 *   (12 aliases of `quotas` with every field: 288 selections, the most a document may write).
 *
 * Each latency phase lasts BENCH_SECONDS (default 10); a phase ends when its last queries do.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  gql,
  gqlData,
  IMPORT_DOCUMENT,
  quotaDocument,
  startAdmin,
  type AdminProcess,
} from '../test/support/admin-process';
import { sleep } from '../test/support/limiter-http';
import { latenciesUntil } from './latency';

const QUOTAS = Number(process.env['BENCH_QUOTAS'] ?? 50);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
const CLIENTS = 3;

const aliases = (n: number, field: string) =>
  `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;
const FLOOD = aliases(4_999, 'quotas { name }');
const EVERY_FIELD =
  'quotas { name match version updatedAt scope shadow onStoreFailure ' +
  'limits { name unit limit windowMs algorithm burst align timezone precision } ' +
  'queue { maxSize maxWaitMs } concurrency { max leaseTtlMs } }';
/** 12 × 24 = 288 selections: just under the 300 a document may write. */
const HEAVY = aliases(12, EVERY_FIELD);
const NORMAL = '{ quotas { name match version } }';

/** The admin's resident set now and at its peak (VmHWM), in MB. */
function memory(admin: AdminProcess): { rss: number; peak: number } {
  if (admin.child.exitCode !== null) return { rss: NaN, peak: NaN };
  const status = readFileSync(`/proc/${admin.child.pid}/status`, 'utf8');
  const mb = (name: string) =>
    Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: mb('VmRSS'), peak: mb('VmHWM') };
}

/** One query: ms to its answer, and what it answered (or how the connection failed). */
async function timed(url: string, query: string): Promise<{ ms: number; answer: string }> {
  const started = performance.now();
  const result = await gql(url, query).catch((error: unknown) => error as Error);
  const ms = performance.now() - started;
  if (result instanceof Error) {
    return { ms, answer: `no answer (${String((result.cause as Error)?.message ?? result)})` };
  }
  const first = result.errors?.[0];
  const answer =
    first === undefined
      ? `data (${Object.keys(result.data ?? {}).length} fields)`
      : `${first.extensions?.code ?? 'error'}: ${first.message.slice(0, 90)}`;
  return { ms, answer };
}

/** Sequential normal queries until `stop` resolves; sorted ms (a query not answered: Infinity). */
function latencies(url: string, stop: Promise<unknown>): Promise<number[]> {
  return latenciesUntil(stop, async () => {
    const data = await gqlData<{ quotas: unknown[] }>(url, NORMAL);
    if (data.quotas.length !== QUOTAS) throw new Error('quotas lost');
  });
}

/** The normal query's latencies while CLIENTS clients send `query` back to back. */
async function beside(
  url: string,
  query: string,
): Promise<{ normal: number[]; each: number[]; failed: string[] }> {
  let stop = false;
  const each: number[] = [];
  const failed: string[] = [];
  const clients = Array.from({ length: CLIENTS }, async () => {
    while (!stop) {
      const { ms, answer } = await timed(url, query);
      if (answer.startsWith('no answer')) failed.push(answer);
      else each.push(ms);
    }
  });
  const normal = await latencies(url, sleep(SECONDS * 1000));
  stop = true;
  await Promise.all(clients);
  return { normal, each: each.sort((a, b) => a - b), failed };
}

function at(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

function summary(sorted: readonly number[]): string {
  return (
    `p50 ${at(sorted, 0.5).toFixed(1)} ms, p99 ${at(sorted, 0.99).toFixed(1)} ms, ` +
    `max ${(sorted.at(-1) ?? NaN).toFixed(1)} ms (${sorted.length} queries)`
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-admin-'));
  const admin = await startAdmin({ NATS_URL: '', DATA_DIR: dir, LOG_LEVEL: 'error' });
  try {
    const names = Array.from({ length: QUOTAS }, (_, i) => `q${i}`);
    await gqlData(admin.url, IMPORT_DOCUMENT, { d: quotaDocument(names) });
    await latencies(admin.url, sleep(1000)); // warm-up
    console.log(
      `admin GraphQL under floods (node ${process.version}, ${QUOTAS} quotas, ${CLIENTS} ` +
        `flooding clients, ${SECONDS} s per phase)`,
    );

    const before = memory(admin);
    const flood = await timed(admin.url, FLOOD);
    console.log(
      `one flood of 4 999 aliases: ${flood.ms.toFixed(0)} ms, answered ${flood.answer}; ` +
        `admin RSS ${before.rss.toFixed(0)} MB before, peak ${memory(admin).peak.toFixed(0)} MB`,
    );
    const heavy = await timed(admin.url, HEAVY);
    console.log(`one heavy query: ${heavy.ms.toFixed(0)} ms, answered ${heavy.answer}`);

    const alone = await latencies(admin.url, sleep(SECONDS * 1000));
    console.log(`normal query alone:                        ${summary(alone)}`);
    for (const [label, query] of [
      ['4 999-alias floods', FLOOD],
      ['heavy queries', HEAVY],
    ] as const) {
      const { normal, each, failed } = await beside(admin.url, query);
      console.log(
        `normal query beside ${CLIENTS} × ${label.padEnd(18)} ${summary(normal)}; ` +
          `p99 ${(at(normal, 0.99) / at(alone, 0.99)).toFixed(1)}x alone`,
      );
      console.log(
        `  ${each.length} ${label} answered, p50 ${at(each, 0.5).toFixed(0)} ms each` +
          (failed.length > 0 ? `, ${failed.length} not (${failed[0]})` : '') +
          `; admin RSS peak ${memory(admin).peak.toFixed(0)} MB`,
      );
    }
  } finally {
    if (admin.child.exitCode !== null) {
      console.log(`the admin exited (${admin.child.exitCode}):\n${admin.output().slice(-2000)}`);
    }
    await admin.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
