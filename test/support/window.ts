/**
 * Fixed windows, and the approved/denied counts of a key's stats whatever its algorithm, are
 * aligned to multiples of windowMs since the epoch: a test whose counts must stay inside one window
 * first waits until the current window has enough time left. Local scope decides on Date.now();
 * cluster scope on Redis's TIME (see `redisClock`).
 */
import { Redis } from 'ioredis';
import { clock, redisOffset } from './cluster-load';
import { sleep } from './limiter-http';

/**
 * Waits until the window of `windowMs` on `now()` has at least `marginMs` left: not at all most of
 * the time, else until just after the window turned.
 */
export async function awayFromWindowEnd(
  windowMs: number,
  marginMs = 5_000,
  now: () => number = Date.now,
): Promise<void> {
  for (;;) {
    const left = windowMs - (now() % windowMs);
    if (left >= marginMs) return;
    await sleep(left + 20);
  }
}

/** A clock on Redis's TIME, the one cluster scope decides on: the local clock plus its offset. */
export async function redisClock(redis: Redis | string): Promise<() => number> {
  const client = typeof redis === 'string' ? new Redis(redis) : redis;
  try {
    const offset = await redisOffset(client);
    return () => clock() + offset;
  } finally {
    if (client !== redis) client.disconnect();
  }
}
