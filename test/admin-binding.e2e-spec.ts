/**
 * Where the real admin process listens, by HOST, ADMIN_TOKEN and ADMIN_INSECURE. A server bound
 * to 127.0.0.1 does not answer on 127.0.0.2; one bound to 0.0.0.0 does (both are loopback, so the
 * test never leaves the machine).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAdmin, type AdminProcess } from './support/admin-process';
import { runAppToExit } from './support/limiter-process';
import { lineLogged, logLines } from './support/log-lines';

jest.setTimeout(240_000);

/** HOST empty is HOST unset (startAdmin sets 127.0.0.1 otherwise). */
const NO_HOST = { HOST: '' };
const TOKEN = { ADMIN_TOKEN: 'binding-test-token' };
const LOOPBACK_WARNING =
  'no admin token is set, so mutations need no token: listening on 127.0.0.1 only ' +
  '(set ADMIN_TOKEN or ADMIN_TOKENS to serve other addresses)';
const INSECURE_WARNING =
  'INSECURE: ADMIN_INSECURE=true and no admin token is set: anyone who reaches 0.0.0.0 ' +
  'can change every quota';

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
  // LOG_LEVEL info, for the start line.
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

/** The address of the start line, and the admin's warnings (written before that line). */
async function started(admin: AdminProcess): Promise<{ address: unknown; warnings: string[] }> {
  const line = await lineLogged(admin, 'the start line', (l) => l.msg.startsWith('listening on'));
  const warnings = logLines(admin.output())
    .filter((l) => l.level === 'warn' && l.context === 'Admin')
    .map((l) => l.msg);
  return { address: line['address'], warnings };
}

describe('admin binding', () => {
  it('without ADMIN_TOKEN listens on 127.0.0.1 only, and warns naming ADMIN_TOKEN', async () => {
    const admin = await start(NO_HOST);
    expect(await started(admin)).toEqual({ address: '127.0.0.1', warnings: [LOOPBACK_WARNING] });
    expect(await healthOn('127.0.0.1', admin.port)).toBe('OK');
    expect(await healthOn('127.0.0.2', admin.port)).toBe('ECONNREFUSED');
  });

  it('with ADMIN_TOKEN listens on every address, without a warning', async () => {
    const admin = await start({ ...NO_HOST, ...TOKEN });
    expect(await started(admin)).toEqual({ address: '0.0.0.0', warnings: [] });
    expect(await healthOn('127.0.0.2', admin.port)).toBe('OK');
  });

  it('refuses to start on HOST=0.0.0.0 without ADMIN_TOKEN, saying what to set', async () => {
    const { code, output } = await runAppToExit('admin', {
      NATS_URL: '',
      DATA_DIR: join(dir, 'refused'),
      HOST: '0.0.0.0',
    });
    expect(code).toBe(1);
    expect(output).toMatch(
      /HOST=0\.0\.0\.0 without ADMIN_TOKEN or ADMIN_TOKENS .*set ADMIN_TOKEN.*ADMIN_INSECURE=true/,
    );
  });

  it('binds HOST=0.0.0.0 without a token when ADMIN_INSECURE=true, and says so loudly', async () => {
    const admin = await start({ HOST: '0.0.0.0', ADMIN_INSECURE: 'true' });
    expect(await started(admin)).toEqual({ address: '0.0.0.0', warnings: [INSECURE_WARNING] });
    expect(await healthOn('127.0.0.2', admin.port)).toBe('OK');
  });
});
