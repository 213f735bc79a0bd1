/**
 * The image's HEALTHCHECK and the compose health checks, run as they are written (node -e and the
 * script) against the real apps: a healthy app passes, an app that is not ready or not there
 * fails. The container's environment is only what the test gives (no PORT inherited).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAdmin } from '../support/admin-process';
import { eventually } from '../support/in-process-limiter';
import {
  freePort,
  startLimiter,
  uniquePrefix,
  type LimiterProcess,
} from '../support/limiter-process';
import { repoFile } from './app-facts';
import { readComposeDocument, type ComposeFile } from './compose-file';
import { execForm, instructions, readStages } from './dockerfile';

const imageCheck = execForm(
  instructions(readStages(repoFile('Dockerfile')).at(-1)!, 'HEALTHCHECK')[0]!,
)!;
const compose = readComposeDocument(repoFile('docker-compose.yml')) as ComposeFile;
/** A compose `test: [CMD, node, ...]` as the command it runs. */
const composeCheck = (service: string): string[] =>
  (compose.services[service]!.healthcheck!.test as string[]).slice(1);

/** Runs a health check command (`node ...`) with exactly `env`; resolves with its exit code. */
function runCheck(command: readonly string[], env: Record<string, string>): Promise<number | null> {
  expect(command[0]).toBe('node');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, command.slice(1), { env, stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

const dirs: string[] = [];
const dataDir = (): string => {
  dirs.push(mkdtempSync(join(tmpdir(), 'deploy-health-')));
  return dirs.at(-1)!;
};

let ready: LimiterProcess;
let waitingForNats: LimiterProcess;
let admin: LimiterProcess;
let closedPort: number;

beforeAll(async () => {
  closedPort = await freePort();
  const started = await Promise.allSettled([
    startLimiter({ NATS_SUBJECT_PREFIX: uniquePrefix(), DATA_DIR: dataDir() }),
    // Nothing listens there: the limiter serves /healthz, but /readyz says 503 (NATS connecting).
    startLimiter({ NATS_URL: `nats://127.0.0.1:${closedPort}`, DATA_DIR: dataDir() }),
    startAdmin({ NATS_URL: '', DATA_DIR: dataDir() }),
  ]);
  // Each one that started is kept, so afterAll stops it even when another did not start.
  [ready, waitingForNats, admin] = started.map((s) =>
    s.status === 'fulfilled' ? s.value : undefined,
  ) as [LimiterProcess, LimiterProcess, LimiterProcess];
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  await eventually(
    () => fetch(`${ready.url}/readyz`).then((r) => r.status),
    (status) => status === 200,
    30_000,
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([ready, waitingForNats, admin].map((p) => p?.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("the image's HEALTHCHECK", () => {
  it('passes on a limiter, on its PORT', async () => {
    expect(await runCheck(imageCheck, { PORT: String(ready.port) })).toBe(0);
  });

  it('passes on a limiter that waits for NATS: it checks liveness (/healthz)', async () => {
    expect(await runCheck(imageCheck, { PORT: String(waitingForNats.port) })).toBe(0);
  });

  it('passes on the admin, on its ADMIN_PORT (nothing on PORT in its container)', async () => {
    const env = { PORT: String(closedPort), ADMIN_PORT: String(admin.port) };
    expect(await runCheck(imageCheck, env)).toBe(0);
  });

  it('fails when nothing answers', async () => {
    const env = { PORT: String(closedPort), ADMIN_PORT: String(closedPort) };
    expect(await runCheck(imageCheck, env)).toBe(1);
  });
});

describe('the compose health checks', () => {
  it('pass on a ready limiter (/readyz) and on the admin (/healthz)', async () => {
    expect(await runCheck(composeCheck('limiter-1'), { PORT: String(ready.port) })).toBe(0);
    const env = { PORT: String(closedPort), ADMIN_PORT: String(admin.port) };
    expect(await runCheck(composeCheck('admin'), env)).toBe(0);
  });

  it('fail on a limiter that is not ready yet (503)', async () => {
    const env = { PORT: String(waitingForNats.port) };
    expect(await runCheck(composeCheck('limiter-2'), env)).toBe(1);
  });

  it('fail on a route the app does not serve (404)', async () => {
    const command = [...composeCheck('limiter-1').slice(0, -1), '/no-such-route'];
    expect(await runCheck(command, { PORT: String(ready.port) })).toBe(1);
  });
});
