/**
 * Limiter replicas as a deployment runs them: child processes in one NATS queue group on a subject
 * prefix of the test's own, deciding cluster-scope quotas in the shared Redis.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { waitReady } from './limiter-http';
import { startLimiter, type LimiterProcess } from './limiter-process';

const NATS_URL = 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

export interface ReplicaOptions {
  /** NATS_SUBJECT_PREFIX of every replica. */
  readonly prefix: string;
  /** CONFIG_FILE of every replica. */
  readonly configFile: string;
  /** Where each replica keeps its DATA_DIR (`data-<i>`). */
  readonly dir: string;
  readonly count?: number;
}

/**
 * Starts the replicas and waits until each is ready. Each is pushed into `into` as soon as it runs,
 * so the caller's cleanup stops those that started when another failed (this then throws). Redis
 * calls get 5 s: these tests check counts, and a loaded machine must not turn them into timeouts.
 */
export async function startReplicas(
  into: LimiterProcess[],
  options: ReplicaOptions,
): Promise<void> {
  const group = `q-${randomUUID()}`;
  const started = await Promise.allSettled(
    Array.from({ length: options.count ?? 2 }, async (_, i) => {
      const limiter = await startLimiter({
        NATS_URL,
        NATS_SUBJECT_PREFIX: options.prefix,
        NATS_QUEUE_GROUP: group,
        REDIS_URL,
        REDIS_TIMEOUT_MS: '5000',
        CONFIG_FILE: options.configFile,
        DATA_DIR: join(options.dir, `data-${i}`),
      });
      into.push(limiter);
    }),
  );
  const failed = started.find((s) => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  await Promise.all(into.map((l) => waitReady(l)));
}
