/**
 * The limiter in this test process (no child, no build): for tests that need its services or many
 * fast requests. Settings are read when the app is created, so the environment is set just before
 * and restored right after.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createLimiterApp } from '../../apps/limiter/src/app';

export interface RunningApp {
  readonly app: NestFastifyApplication;
  readonly url: string;
}

/** Starts on an ephemeral port without NATS, with quiet logs; `env` overrides anything. */
export async function startInProcessLimiter(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<RunningApp> {
  const saved = { ...process.env };
  Object.assign(process.env, { NATS_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'error', ...env });
  try {
    const app = await createLimiterApp({ logger: false });
    await app.listen(0, '127.0.0.1');
    return { app, url: await app.getUrl() };
  } finally {
    process.env = saved;
  }
}

/** Polls until `check` holds; fails after `timeoutMs` with the last value read. */
export async function eventually<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`condition not met; last value ${JSON.stringify(value)}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
