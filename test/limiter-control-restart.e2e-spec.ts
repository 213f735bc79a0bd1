/**
 * The control watch across NATS outages, on a NATS server with JetStream of this test's own (the
 * shared one cannot be stopped): the limiter starts before NATS exists, waits for the admin to
 * create the bucket (it never creates it), keeps the admin's quotas while NATS is down, and
 * follows the bucket again after the server restarts (same store directory).
 */
import { controlNames, encodeEntry, type ControlQuota } from '@app/contracts';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type KV, type NatsConnection } from 'nats';
import { writeAsAdmin } from './support/control-keys';
import { post, sleep, type Json } from './support/limiter-http';
import {
  freePort,
  startLimiter,
  uniquePrefix,
  type LimiterProcess,
} from './support/limiter-process';
import { startNatsServer, stopProcess, waitUntil as eventually } from './support/nats-process';

jest.setTimeout(120_000);

const quota = (name: string, limit: number): ControlQuota => ({
  spec: {
    name,
    limits: [
      { name: 'rph', unit: 'requests', limit, windowMs: 3_600_000, algorithm: 'fixed_window' },
    ],
  },
  version: limit,
  updatedAt: Date.now(),
});

async function readyz(limiter: LimiterProcess): Promise<Json> {
  return (await (await fetch(`${limiter.url}/readyz`)).json()) as Json;
}

describe('the control watch across NATS outages', () => {
  const prefix = uniquePrefix();
  const bucket = controlNames(prefix).bucket;
  const root = mkdtempSync(join(tmpdir(), 'limiter-control-restart-'));
  let natsServer: ChildProcess | undefined;
  let limiter: LimiterProcess | undefined;
  let nc: NatsConnection | undefined;

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    await nc?.close().catch(() => undefined);
    await stopProcess(natsServer);
    rmSync(root, { recursive: true, force: true });
  });

  const limitOf = async (name: string): Promise<unknown> =>
    (await post(limiter!.url, '/v1/decide', { key: 'k', quota: name }))['limit'];

  it('finds the bucket once the admin creates it, keeps the set while NATS is down, follows it after', async () => {
    const port = await freePort();
    const store = join(root, 'jetstream');
    limiter = await startLimiter({
      NATS_URL: `nats://127.0.0.1:${port}`,
      NATS_SUBJECT_PREFIX: prefix,
      DATA_DIR: join(root, 'data'),
    });
    expect(await readyz(limiter)).toMatchObject({ nats: 'connecting', control: 'none' });

    natsServer = await startNatsServer(port, { storeDir: store });
    await eventually('ready', async () => (await readyz(limiter!))['ready'] === true);
    nc = await connect({
      servers: `127.0.0.1:${port}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 100,
    });
    // The bucket is the admin's: the limiter waits for it rather than creating it.
    await sleep(1_500);
    const jsm = await nc.jetstreamManager();
    await expect(jsm.streams.info(`KV_${bucket}`)).rejects.toThrow('stream not found');
    expect(await readyz(limiter)).toMatchObject({ ready: true, control: 'none' });

    let kv: KV = await nc.jetstream().views.kv(bucket, { history: 1 });
    // Written as the admin writes (signed); the sequence goes on across the NATS restart.
    const writes = writeAsAdmin(nc, kv, bucket);
    const put = async (q: ControlQuota): Promise<void> => {
      const { key, value } = encodeEntry({ kind: 'quota', quota: q });
      await writes.put(key, value);
    };
    const createdAt = Date.now();
    await put(quota('one', 5));
    await eventually('one in force', async () => (await limitOf('one')) === 5, 5_000);
    // Looked for every second: found within about that.
    expect(Date.now() - createdAt).toBeLessThan(2_500);
    expect(await readyz(limiter)).toMatchObject({ control: 'synced' });

    await stopProcess(natsServer);
    await eventually('cached while NATS is down', async () => {
      const body = await readyz(limiter!);
      return body['nats'] === 'disconnected' && body['control'] === 'cached';
    });
    expect(await limitOf('one')).toBe(5);

    natsServer = await startNatsServer(port, { storeDir: store });
    await eventually('synced again', async () => (await readyz(limiter!))['control'] === 'synced');
    kv = await nc.jetstream().views.kv(bucket, { bindOnly: true });
    const putAt = Date.now();
    await put(quota('one', 6));
    await put(quota('two', 2));
    await eventually('changes after the restart', async () => (await limitOf('two')) === 2, 5_000);
    expect(await limitOf('one')).toBe(6);
    expect(Date.now() - putAt).toBeLessThan(1_000);

    await kv.destroy();
    expect(await limiter.stop('SIGTERM')).toBe(0);
  });
});
