import type { ControlSequence, RememberingOpener, SigningKey } from '@app/contracts';
import type { NatsConnection } from 'nats';
import { ControlBucket } from './bucket-writes';
import { errorMessage } from './error-message';

/**
 * The control bucket's bounds (docs/operations.md, "Control keys"). A 20 000-quota import is
 * about 5 MB of entries and as much again in parts while it is published; 64 MiB leaves room
 * for that several times over, and for the delete markers of quotas deleted over the years.
 * JetStream refuses a write past it (discard new): a flood of foreign writes fills the bucket,
 * not the server's disk.
 */
export const MAX_BUCKET_BYTES = 64 * 1024 * 1024;
/** One value: a quota or provider entry, or a change part (at most 64 KiB and its signature). */
export const MAX_VALUE_BYTES = 256 * 1024;

export interface ControlBucketOptions {
  readonly seed: SigningKey | undefined;
  readonly sequence: ControlSequence;
  readonly opener: RememberingOpener;
  readonly log: { warn(message: string): void; log(message: string): void };
}

/**
 * Opens the bucket (creating it with its bounds), gives a bucket an older admin created
 * without bounds its bounds, and answers the writer the admin uses.
 */
export async function openControlBucket(
  nc: NatsConnection,
  name: string,
  timeoutMs: number,
  options: ControlBucketOptions,
): Promise<ControlBucket> {
  const js = nc.jetstream({ timeout: timeoutMs });
  const kv = await js.views.kv(name, {
    history: 1,
    max_bytes: MAX_BUCKET_BYTES,
    maxValueSize: MAX_VALUE_BYTES,
    timeout: timeoutMs,
  });
  await boundUnbounded(nc, name, timeoutMs, options.log);
  return new ControlBucket(kv, js, name, options.seed, options.sequence, options.opener);
}

/** A bucket without bounds gets them, unless it holds more already (said, left alone). */
async function boundUnbounded(
  nc: NatsConnection,
  name: string,
  timeoutMs: number,
  log: ControlBucketOptions['log'],
): Promise<void> {
  const stream = `KV_${name}`;
  try {
    const jsm = await nc.jetstreamManager({ timeout: timeoutMs });
    const { config, state } = await jsm.streams.info(stream);
    const unbounded = !(config.max_bytes > 0) || !(config.max_msg_size > 0);
    if (!unbounded) return;
    if (state.bytes > MAX_BUCKET_BYTES) {
      log.warn(`control bucket ${name} holds ${state.bytes} bytes: left without a bound`);
      return;
    }
    await jsm.streams.update(stream, {
      max_bytes: config.max_bytes > 0 ? config.max_bytes : MAX_BUCKET_BYTES,
      max_msg_size: config.max_msg_size > 0 ? config.max_msg_size : MAX_VALUE_BYTES,
    });
    log.log(
      `control bucket ${name}: bounded to ${MAX_BUCKET_BYTES} bytes, values of ${MAX_VALUE_BYTES}`,
    );
  } catch (error) {
    log.warn(`control bucket ${name}: its bounds could not be set (${errorMessage(error)})`);
  }
}
