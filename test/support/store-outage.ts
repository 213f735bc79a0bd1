/**
 * For tests of a hung Redis (SIGSTOP): the REDIS_TIMEOUT_MS they run with, the bounds a request's
 * time is held to, and acquires timed as the client sees them.
 */
import { httpAcquire, type Json } from './limiter-http';
import type { LimiterProcess } from './limiter-process';

export const TIMEOUT_MS = 1_000;

/**
 * The longest a request may take while Redis hangs. Before the store bounded its calls end to end
 * a request took up to 2 × TIMEOUT_MS (a call queued behind a timed-out one waited for both); a
 * bounded call takes TIMEOUT_MS plus HTTP and event-loop time: 800 ms of margin for a loaded
 * 2-core machine, and still below 2 × TIMEOUT_MS.
 */
export const HANG_BOUND_MS = 1_800;

/**
 * The longest a request may take once the circuit is open: no Redis call at all, so HTTP and the
 * engine alone. Any wait on Redis would take the whole TIMEOUT_MS; half of it leaves ~500 ms for a
 * loaded machine.
 */
export const OPEN_BOUND_MS = TIMEOUT_MS / 2;

export type Timed = Json & { ms: number };

/** An acquire over HTTP, with the time it took as the client saw it. */
export async function timedAcquire(url: string, body: Json): Promise<Timed> {
  const started = performance.now();
  const reply = await httpAcquire(url, body);
  return { ...reply, ms: performance.now() - started };
}

/** The body of /readyz, whatever its status. */
export async function readyz(limiter: LimiterProcess): Promise<Json> {
  return (await (await fetch(`${limiter.url}/readyz`)).json()) as Json;
}
