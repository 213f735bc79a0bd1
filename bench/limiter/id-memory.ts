/**
 * Figure (i) of bench:limiter: the memory a limiter keeps for client requestIds. A fresh limiter
 * takes N acquires over NATS (10 000 keys, 128 in flight) each with a new requestId shaped as the
 * SDK makes them; another fresh limiter takes the same N without ids. After a quiet pause, each
 * one's RSS and V8 heap (its own /metrics) are read, side by side.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInbox, type NatsConnection } from 'nats';

export interface IdMemoryRun {
  readonly nc: NatsConnection;
  /** Acquires sent to each limiter. */
  readonly count: number;
  /** Starts a limiter serving `prefix`; resolves once it is ready. */
  readonly start: (
    prefix: string,
    dataDir: string,
  ) => Promise<{ url: string; stop(): Promise<number | null>; output(): string }>;
}

export interface Memory {
  /** process_resident_memory_bytes */
  readonly rss: number;
  /** nodejs_heap_size_used_bytes */
  readonly heap: number;
}

export interface IdMemoryFigure {
  readonly withoutIds: Memory;
  readonly withIds: Memory;
}

const KEYS = 10_000;
const IN_FLIGHT = 128;
/** Long enough for V8's idle-time collection to run after the load stops. */
const QUIET_MS = 5_000;

export async function idMemoryFigure(run: IdMemoryRun): Promise<IdMemoryFigure> {
  const withoutIds = await oneLimiter(run, false);
  const withIds = await oneLimiter(run, true);
  return { withoutIds, withIds };
}

async function oneLimiter(run: IdMemoryRun, ids: boolean): Promise<Memory> {
  const dir = mkdtempSync(join(tmpdir(), 'limiter-bench-ids-'));
  const prefix = `bench.${randomUUID().replaceAll('-', '')}.ids`;
  const limiter = await run.start(prefix, dir);
  let memory: Memory;
  try {
    // As the SDK's RequestIdGenerator: a random base64url prefix and a counter in base 36.
    const idPrefix = `${randomBytes(16).toString('base64url')}-`;
    const payload = (i: number): Buffer =>
      Buffer.from(
        ids
          ? `{"key":"user-${i % KEYS}","requestId":"${idPrefix}${i.toString(36)}"}`
          : `{"key":"user-${i % KEYS}"}`,
      );
    await countedLoop(run.nc, `${prefix}.acquire`, payload, run.count);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    memory = await memoryOf(limiter.url);
  } finally {
    await limiter.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return memory;
}

/** Sends `count` requests, IN_FLIGHT outstanding; resolves when every one is answered. */
async function countedLoop(
  nc: NatsConnection,
  subject: string,
  payload: (i: number) => Uint8Array,
  count: number,
): Promise<void> {
  const inbox = createInbox();
  let sent = 0;
  let replies = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const send = (): void => {
    nc.publish(subject, payload(sent++), { reply: inbox });
  };
  const sub = nc.subscribe(inbox, {
    callback: () => {
      replies++;
      if (sent < count) send();
      else if (replies === count) done();
    },
  });
  await nc.flush();
  for (let i = 0; i < Math.min(IN_FLIGHT, count); i++) send();
  // Bounded: a limiter that stops answering fails the run instead of hanging it.
  let stalled: NodeJS.Timeout | undefined;
  let last = -1;
  const watch = new Promise<never>((_, reject) => {
    stalled = setInterval(() => {
      if (replies === last)
        reject(new Error(`${subject}: no reply for 10 s (${replies} of ${count})`));
      last = replies;
    }, 10_000);
  });
  try {
    await Promise.race([finished, watch]);
  } finally {
    clearInterval(stalled);
    sub.unsubscribe();
  }
}

async function memoryOf(url: string): Promise<Memory> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const gauge = (name: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    if (line === undefined) throw new Error(`/metrics: no ${name}`);
    return Number(line.slice(name.length + 1));
  };
  return {
    rss: gauge('process_resident_memory_bytes'),
    heap: gauge('nodejs_heap_size_used_bytes'),
  };
}
