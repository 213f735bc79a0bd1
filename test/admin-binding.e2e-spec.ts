/**
 * Where the real admin process listens, by HOST, ADMIN_TOKEN and ADMIN_INSECURE. A server bound
 * to 127.0.0.1 does not answer on 127.0.0.2; one bound to 0.0.0.0 does (both are loopback, so the
 * test never leaves the machine). Then which Host and Origin headers it answers: a page of
 * another site, its name rebound to 127.0.0.1 by DNS, sends `Host: attacker.example`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gqlData, startAdmin, type AdminProcess } from './support/admin-process';
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

interface Answer {
  status: number;
  body: string;
}

/** One request to the admin's port with the headers given as they are (Host included). */
function send(
  admin: AdminProcess,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // A connection each: a refused upgrade's socket is closed, not reused.
    const req = request({
      host: '127.0.0.1',
      port: admin.port,
      method,
      path,
      headers,
      agent: false,
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.end(body);
  });
}

const UPSERT =
  'mutation { upsertQuota(input: { name: "rebound", match: "rebound-*", ' +
  'limits: [{ name: "rps", limit: 1000000, window: "1s" }] }) { name } }';

function mutate(admin: AdminProcess, headers: Record<string, string>): Promise<Answer> {
  const body = JSON.stringify({ query: UPSERT });
  return send(admin, 'POST', '/graphql', { 'content-type': 'application/json', ...headers }, body);
}

/** The start of a graphql-ws WebSocket on /graphql: 101 when the admin upgrades it. */
function upgrade(admin: AdminProcess, headers: Record<string, string>): Promise<Answer> {
  return send(admin, 'GET', '/graphql', {
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-version': '13',
    'sec-websocket-key': randomBytes(16).toString('base64'),
    'sec-websocket-protocol': 'graphql-transport-ws',
    ...headers,
  });
}

async function quotaNames(admin: AdminProcess): Promise<string[]> {
  const { quotas } = await gqlData<{ quotas: { name: string }[] }>(
    admin.url,
    '{ quotas { name } }',
  );
  return quotas.map((quota) => quota.name);
}

describe('admin Host and Origin checks', () => {
  it('on loopback without a token, refuses a rebound Host and a foreign Origin, and changes nothing', async () => {
    const admin = await start(NO_HOST);
    const own = `127.0.0.1:${admin.port}`;
    const rebound = { host: `attacker.example:${admin.port}` };

    const refused = await mutate(admin, rebound);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain(`Host "attacker.example:${admin.port}" is refused`);
    const foreign = await mutate(admin, { host: own, origin: 'http://attacker.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toContain('Origin "http://attacker.example" is refused');
    expect(await quotaNames(admin)).not.toContain('rebound');

    for (const path of ['/', '/graphiql', '/healthz']) {
      expect((await send(admin, 'GET', path, rebound)).status).toBe(403);
    }
    expect((await upgrade(admin, rebound)).status).toBe(403);
    expect((await upgrade(admin, { host: own, origin: 'http://attacker.example' })).status).toBe(
      403,
    );

    // The admin's own pages and clients without Origin still get through.
    expect((await upgrade(admin, { host: own, origin: `http://${own}` })).status).toBe(101);
    expect((await upgrade(admin, { host: `localhost:${admin.port}` })).status).toBe(101);
    expect((await send(admin, 'GET', '/graphiql', { host: `[::1]:${admin.port}` })).status).toBe(
      200,
    );
    const same = await mutate(admin, {
      host: `localhost:${admin.port}`,
      origin: `http://localhost:${admin.port}`,
    });
    expect(same).toMatchObject({ status: 200 });
    expect(await quotaNames(admin)).toContain('rebound');
  });

  it('answers the names of ADMIN_ALLOWED_ORIGINS, as a proxy that keeps Host sends them', async () => {
    const admin = await start({ ...NO_HOST, ADMIN_ALLOWED_ORIGINS: 'https://admin.example.com' });
    const proxied = { host: 'admin.example.com', origin: 'https://admin.example.com' };
    expect((await mutate(admin, proxied)).status).toBe(200);
    expect((await upgrade(admin, proxied)).status).toBe(101);
    expect((await mutate(admin, { host: 'other.example.com' })).status).toBe(403);
  });

  it('bound elsewhere, checks Origin only: a foreign page is refused even with the token', async () => {
    const admin = await start({ HOST: '0.0.0.0', ...TOKEN });
    const auth = { authorization: `Bearer ${TOKEN.ADMIN_TOKEN}` };
    expect((await mutate(admin, { ...auth, host: `admin.internal:${admin.port}` })).status).toBe(
      200,
    );
    const foreign = {
      ...auth,
      host: `admin.internal:${admin.port}`,
      origin: 'http://attacker.example',
    };
    expect((await mutate(admin, foreign)).status).toBe(403);
    expect((await upgrade(admin, foreign)).status).toBe(403);
  });
});
