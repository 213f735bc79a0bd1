/**
 * A real limiter for the NestJS integration tests: in this process (fast to start), on the real
 * NATS with a subject prefix of its own and the quotas the test gives. Every wait is bounded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFile, sleep, type Json } from './limiter-http';
import { startInProcessLimiter, type RunningApp } from './in-process-limiter';
import { uniquePrefix } from './limiter-process';
import { awayFromWindowEnd } from './window';

const HOUR = 3_600_000;

export const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';

export interface NestTestLimiter {
  readonly prefix: string;
  readonly limiter: RunningApp;
  stop(): Promise<void>;
}

/** How long before the hour turns a block's limiter may start. */
export const NEST_HOUR_MARGIN_MS = 30_000;
/** The hook and test timeout of the files that start one: the wait, a start, and slack. */
export const NEST_HOOK_TIMEOUT_MS = NEST_HOUR_MARGIN_MS + 60_000;

/** Starts a limiter subscribed on a fresh prefix with `quotas`; resolves once /readyz says ready. */
export async function startNestTestLimiter(quotas: Json[]): Promise<NestTestLimiter> {
  // The quotas below count per hour: start where the hour cannot turn during the block's tests
  // (each takes seconds). The wait is at most NEST_HOUR_MARGIN_MS, so the files' hook timeout
  // (NEST_HOOK_TIMEOUT_MS) must cover it plus a start: a 120 s margin under a 60 s timeout failed
  // every run that reached this in the hour's last two minutes.
  await awayFromWindowEnd(HOUR, NEST_HOUR_MARGIN_MS);
  const dir = mkdtempSync(join(tmpdir(), 'nest-'));
  const prefix = uniquePrefix();
  const limiter = await startInProcessLimiter(join(dir, 'data'), {
    NATS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    CONFIG_FILE: configFile(dir, quotas),
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await fetch(`${limiter.url}/readyz`);
    if (res.status === 200) break;
    if (Date.now() > deadline) throw new Error(`limiter not ready: ${await res.text()}`);
    await sleep(50);
  }
  return {
    prefix,
    limiter,
    async stop() {
      await limiter.app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A quota of `limit` requests per hour (fixed window), the hour aligned on the clock. */
export function hourlyQuota(name: string, limit: number): Json {
  return {
    name,
    limits: [
      { name: 'per-hour', unit: 'requests', limit, window: '1h', algorithm: 'fixed_window' },
    ],
  };
}
