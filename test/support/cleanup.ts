/**
 * afterAll helpers that survive a partial setup or a failing step: every step runs, whatever an
 * earlier one threw (a NATS close that rejects must not leave the limiters and redis-server
 * behind), each after the previous one settled; the first error is thrown at the end.
 */
import { rmSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { NatsConnection } from 'nats';
import type { Load } from './cluster-load';
import type { LimiterProcess } from './limiter-process';
import type { RedisProcess } from './redis-process';

export async function cleanUp(...steps: (() => unknown)[]): Promise<void> {
  const errors: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw errors[0];
}

/** What a cluster test starts; any part may be missing when its beforeAll failed half way. */
export interface ClusterRig {
  readonly loads: readonly Load[];
  readonly nc: NatsConnection | undefined;
  readonly admin: Redis | undefined;
  /** May have holes: replicas that did not start. */
  readonly limiters: readonly LimiterProcess[];
  readonly redis: RedisProcess | undefined;
  readonly dir: string;
}

/** Stops the loads, closes the clients, stops the limiters and Redis, removes the directory. */
export function stopRig(rig: ClusterRig): Promise<void> {
  return cleanUp(
    () => Promise.all(rig.loads.map((l) => l.stop())),
    () => rig.nc?.close(),
    () => rig.admin?.disconnect(),
    () => Promise.allSettled(rig.limiters.map((l) => l.stop())),
    () => rig.redis?.kill(),
    () => rmSync(rig.dir, { recursive: true, force: true }),
  );
}
