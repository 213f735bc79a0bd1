/**
 * Where the real admin process listens, by HOST, ADMIN_TOKEN and ADMIN_INSECURE. A server bound
 * to 127.0.0.1 does not answer on 127.0.0.2; one bound to 0.0.0.0 does (both are loopback, so the
 * test never leaves the machine).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAdmin, type AdminProcess } from './support/admin-process';

jest.setTimeout(240_000);

/** HOST empty is HOST unset (startAdmin sets 127.0.0.1 otherwise). */
const NO_HOST = { HOST: '' };
const TOKEN = { ADMIN_TOKEN: 'binding-test-token' };

let dir: string;
const running: AdminProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'admin-binding-'));
});

afterAll(async () => {
  await Promise.all(running.map((admin) => admin.stop()));
  rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<AdminProcess> {
  // LOG_LEVEL info: the "listening on" line tells the warning (written just after it) is due.
  const admin = await startAdmin({
    NATS_URL: '',
    DATA_DIR: join(dir, String(running.length)),
    LOG_LEVEL: 'info',
    ...env,
  });
  running.push(admin);
  return admin;
}

/** 'OK', or the code of the connection's failure (ECONNREFUSED when nothing listens there). */
async function healthOn(address: string, port: number): Promise<string> {
  try {
    return await (await fetch(`http://${address}:${port}/healthz`)).text();
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return cause?.code ?? String(error);
  }
}

/** The admin logs where it listens (and any warning) just after the port opens: wait for it. */
async function outputWith(admin: AdminProcess, pattern = /listening on/): Promise<string> {
  const deadline = Date.now() + 30_000;
  while (!pattern.test(admin.output())) {
    if (Date.now() > deadline) throw new Error(`no ${pattern} in the output:\n${admin.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return admin.output();
}

describe('admin binding', () => {
  it('without ADMIN_TOKEN listens on 127.0.0.1 only, and warns naming ADMIN_TOKEN', async () => {
    const admin = await start(NO_HOST);
    expect(await healthOn('127.0.0.1', admin.port)).toBe('OK');
    expect(await healthOn('127.0.0.2', admin.port)).toBe('ECONNREFUSED');
    expect(await outputWith(admin, /ADMIN_TOKEN is not set/)).toMatch(
      /WARN.*ADMIN_TOKEN is not set, so mutations need no token: listening on 127\.0\.0\.1 only/,
    );
  });

  it('with ADMIN_TOKEN listens on every address, without the warning', async () => {
    const admin = await start({ ...NO_HOST, ...TOKEN });
    expect(await healthOn('127.0.0.2', admin.port)).toBe('OK');
    expect(await outputWith(admin)).not.toMatch(/ADMIN_TOKEN is not set|INSECURE/);
  });

  it('refuses to start on HOST=0.0.0.0 without ADMIN_TOKEN, saying what to set', async () => {
    const refused = start({ HOST: '0.0.0.0' });
    await expect(refused).rejects.toThrow(/admin exited 1/);
    await expect(refused).rejects.toThrow(
      /HOST=0\.0\.0\.0 without ADMIN_TOKEN .*set ADMIN_TOKEN.*ADMIN_INSECURE=true/,
    );
  });

  it('binds HOST=0.0.0.0 without a token when ADMIN_INSECURE=true, and says so loudly', async () => {
    const admin = await start({ HOST: '0.0.0.0', ADMIN_INSECURE: 'true' });
    expect(await healthOn('127.0.0.2', admin.port)).toBe('OK');
    expect(await outputWith(admin, /INSECURE: /)).toMatch(
      /WARN.*INSECURE: ADMIN_INSECURE=true and ADMIN_TOKEN is not set: anyone who reaches 0\.0\.0\.0 can change every quota/,
    );
  });
});
