import { RateLimitClient } from '@app/client';
import type { AcquireRequest } from '@app/contracts';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { connect } from 'nats';
import { closedLoop } from './load';
import { watchNoise } from './machine';
import { SDK_BATCHED, RAW, SDK_SINGLE } from './variants';
import { freePort, startNode } from '../limiter/processes';

const root = join(__dirname, '..', '..');
async function main(): Promise<void> {
  const prefix = `bench.${randomUUID().replaceAll('-', '')}`;
  const port = await freePort();
  const extra = (process.env.LIMITER_ARGS ?? '').split(' ').filter(Boolean);
  const limiter = await startNode(
    ['-r', process.env.PRELOAD ?? '/tmp/perfdiag/eld.js', ...extra, join(root, 'dist', 'apps', 'limiter', 'main.js')],
    { PORT: String(port), HOST: '127.0.0.1', NATS_URL: 'nats://127.0.0.1:4222', NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: `b-${randomUUID()}`, MAX_REQUESTS: '1000000000', WINDOW_MILLIS: '1000',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'diag-')), LOG_LEVEL: 'warn' },
    async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok,
  );
  const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
  const variant = process.env.VARIANT === 'raw' ? RAW : process.env.VARIANT === 'single' ? SDK_SINGLE : SDK_BATCHED;
  const { acquire } = process.env.BATCH ? (() => { const c = new RateLimitClient({ connection: nc, subjectPrefix: prefix, batching: { maxBatchSize: Number(process.env.BATCH) }, timeoutMs: 10000 }); return { acquire: (r: AcquireRequest) => c.acquire(r) }; })() : variant.make(nc, prefix);
  await closedLoop(acquire, 1000, Number(process.env.WARM ?? 1.5));
  const peak = await closedLoop(acquire, 1000, 3);
  const rate = Number(process.env.RATE ?? peak / 2);
  console.log(`peak ${Math.round(peak)} rate ${Math.round(rate)}`);
  const noise = watchNoise();
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const seconds = 3;
  const total = Math.floor(rate * seconds);
  const lat = new Float64Array(total);
  const dueOf = new Float64Array(total);
  const lateness: number[] = [];
  let sent = 0, answered = 0;
  let done!: () => void;
  const drained = new Promise<void>((r) => (done = r));
  const started = performance.now();
  const interval = 1000 / rate;
  const pace = (): void => {
    const now = performance.now();
    const due = Math.min(total, Math.floor((now - started) / interval) + 1);
    if (sent < due) lateness.push(now - (started + sent * interval));
    for (; sent < due; sent++) {
      const seq = sent;
      const dueAt = started + seq * interval;
      dueOf[seq] = dueAt - started;
      acquire({ key: `user-${seq % 1000}` }).then(() => { lat[seq] = performance.now() - dueAt; if (++answered === total) done(); });
    }
    if (sent < total) setTimeout(pace, 1);
  };
  pace();
  await drained;
  h.disable();
  console.log('noise', JSON.stringify(noise()));
  const sorted = Float64Array.from(lat).sort();
  const pct = (p: number) => sorted[Math.floor(sorted.length * p)]!.toFixed(2);
  console.log(`p50 ${pct(0.5)} p90 ${pct(0.9)} p99 ${pct(0.99)} max ${sorted[sorted.length - 1]!.toFixed(1)}`);
  lateness.sort((a, b) => a - b);
  console.log(`pacer ticks ${lateness.length} lateness p50 ${lateness[Math.floor(lateness.length/2)]!.toFixed(2)} p99 ${lateness[Math.floor(lateness.length*0.99)]!.toFixed(2)} max ${lateness[lateness.length-1]!.toFixed(1)}`);
  console.log(`bench ELD p50 ${(h.percentile(50)/1e6).toFixed(1)} p99 ${(h.percentile(99)/1e6).toFixed(1)} max ${(h.max/1e6).toFixed(1)}`);
  // latency by 100ms bucket of due time: max and p99
  const buckets = new Map<number, number[]>();
  for (let i = 0; i < total; i++) { const b = Math.floor(dueOf[i]! / 100); (buckets.get(b) ?? buckets.set(b, []).get(b)!).push(lat[i]!); }
  const line: string[] = [];
  for (const [b, v] of buckets) { v.sort((x, y) => x - y); line.push(`${b}:${v[Math.floor(v.length*0.5)]!.toFixed(0)}/${v[v.length-1]!.toFixed(0)}`); }
  console.log('by 100ms (p50/max):', line.join(' '));
  const fine: string[] = [];
  for (let i = 0; i < total; i++) if (dueOf[i]! > seconds * 1000 - 150 && i % 500 === 0) fine.push(`${dueOf[i]!.toFixed(0)}:${lat[i]!.toFixed(1)}`);
  console.log('tail', fine.join(' '));
  await nc.close();
  await limiter.stop();
  console.log(limiter.output().split('\n').filter((l) => /ELD|STALLS|gc|Scavenge|Mark/.test(l)).slice(-400).join('\n'));
}
void main().then(() => process.exit(0));
