/**
 * The connection RateLimitModule opens itself (`servers`) must outlive a NATS outage of any
 * length: nats.js gives up after 10 reconnect attempts by default (about 20 s), and a closed
 * connection would leave every guarded call answered by the failure policy until a restart.
 */
import type { ChildProcess } from 'node:child_process';
import { RateLimitConnection } from '@app/client/nest/rate-limit.connection';
import { freePort } from './support/limiter-process';
import { startNatsServer } from './support/nats-process';
import { DebugEvents } from 'nats';

jest.setTimeout(90_000);

let server: ChildProcess | undefined;

afterAll(() => {
  if (server?.exitCode === null) server.kill('SIGKILL');
});

it('keeps reconnecting past the nats.js default of 10 attempts while NATS is down', async () => {
  const port = await freePort();
  server = await startNatsServer(port);
  const opened = await RateLimitConnection.open({ servers: `nats://127.0.0.1:${port}` });
  const nc = opened.connection;
  let attempts = 0;
  const twelveAttempts = (async () => {
    for await (const status of nc.status()) {
      if (status.type === DebugEvents.Reconnecting && ++attempts >= 12) return 'still reconnecting';
    }
    return 'status ended';
  })();
  const closed = nc.closed().then(() => 'closed');
  server.kill('SIGKILL');
  // Bounded: 12 attempts 2 s apart, or the close that ends them (after the 10th by default).
  const outcome = await Promise.race([twelveAttempts, closed]);
  expect(outcome).toBe('still reconnecting');
  expect(nc.isClosed()).toBe(false);
  await nc.close();
});
