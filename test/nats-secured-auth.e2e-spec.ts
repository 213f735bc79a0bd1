/**
 * Secured connections, authentication (issue 12, point 6): the limiter and the admin against
 * private nats-servers that want a token, a user and password, or a .creds file (operator mode,
 * JWTs signed by the test, memory resolver). With the right credentials a NATS acquire and a
 * control change work end to end; with wrong or missing ones /readyz says why, the reason is
 * logged once, HTTP is still served, and no secret appears in any output.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credsAuthenticator } from 'nats';
import { RateLimitConnection } from '@app/client/nest';
import { startLimiter } from './support/limiter-process';
import { operatorMode } from './support/nats-jwt';
import {
  refusedButServing,
  servesEndToEnd,
  startSecuredNats,
  type SecuredNats,
} from './support/secured-nats';

jest.setTimeout(180_000);

const TOKEN = 'tok-5f0c1e7a9b';
const PASSWORD = 'pw-83d1c0aa42';
const WRONG = 'wrong-secret-77';
const AUTH_REFUSED = /Authorization Violation/;

const root = mkdtempSync(join(tmpdir(), 'nats-secured-auth-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let server: SecuredNats | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** A limiter or admin with `env`, refused by the server for its credentials; its output. */
const refused = (kind: 'limiter' | 'admin', name: string, env: Record<string, string>) =>
  refusedButServing(server!, kind, join(root, name), env, AUTH_REFUSED);

describe('a token (NATS_TOKEN)', () => {
  it('serves end to end with the token; without it or with a wrong one: not ready, HTTP served', async () => {
    server = await startSecuredNats(join(root, 'token'), `authorization { token: "${TOKEN}" }`);
    const url = server.url;
    const good = await servesEndToEnd(
      join(root, 'token-ok'),
      { NATS_URL: url, NATS_TOKEN: TOKEN },
      { servers: url, token: TOKEN },
    );
    const outputs = [
      good,
      await refused('limiter', 'token-wrong', { NATS_URL: url, NATS_TOKEN: WRONG }),
      await refused('limiter', 'token-none', { NATS_URL: url }),
      await refused('admin', 'token-admin-wrong', { NATS_URL: url, NATS_TOKEN: WRONG }),
    ];
    for (const output of outputs) {
      expect(output).not.toContain(TOKEN);
      expect(output).not.toContain(WRONG);
    }
  });
});

describe('a user and password (NATS_USER/NATS_PASSWORD, or in NATS_URL)', () => {
  it('serves end to end with either form; a wrong password: not ready, HTTP served', async () => {
    server = await startSecuredNats(
      join(root, 'users'),
      `authorization { users: [ { user: ratelimit, password: "${PASSWORD}" } ] }`,
    );
    const url = server.url;
    const client = { servers: url, user: 'ratelimit', pass: PASSWORD };
    const outputs = [
      await servesEndToEnd(
        join(root, 'users-vars'),
        { NATS_URL: url, NATS_USER: 'ratelimit', NATS_PASSWORD: PASSWORD },
        client,
      ),
      // nats.js ignores credentials in a URL: before they were read out, this connected nowhere.
      await servesEndToEnd(
        join(root, 'users-url'),
        { NATS_URL: url.replace('//', `//ratelimit:${PASSWORD}@`) },
        client,
      ),
      await refused('limiter', 'users-wrong', {
        NATS_URL: url,
        NATS_USER: 'ratelimit',
        NATS_PASSWORD: WRONG,
      }),
      await refused('admin', 'users-url-wrong', {
        NATS_URL: url.replace('//', `//ratelimit:${WRONG}@`),
      }),
    ];
    for (const output of outputs) {
      expect(output).not.toContain(PASSWORD);
      expect(output).not.toContain(WRONG);
    }
  });
});

describe("RateLimitModule's own connection (`servers`) with a user and password", () => {
  it('connects with its `nats` options, and is refused without them', async () => {
    server = await startSecuredNats(
      join(root, 'module'),
      `authorization { users: [ { user: ratelimit, password: "${PASSWORD}" } ] }`,
    );
    const servers = server.url;
    const opened = await RateLimitConnection.open({
      servers,
      nats: { user: 'ratelimit', pass: PASSWORD, timeout: 5_000 },
    });
    try {
      expect(opened.owned).toBe(true);
      await opened.connection.flush();
    } finally {
      await opened.close();
    }
    await expect(RateLimitConnection.open({ servers, nats: { timeout: 5_000 } })).rejects.toThrow(
      AUTH_REFUSED,
    );
  });
});

describe('a credentials file (NATS_CREDS), operator mode', () => {
  it('serves end to end with a user of the account; a user of an unknown account is refused', async () => {
    const dir = join(root, 'operator');
    const file = (name: string, text: string): string => {
      const path = join(root, name);
      writeFileSync(path, text);
      return path;
    };
    const mode = operatorMode((jwt) => file('operator.jwt', jwt));
    server = await startSecuredNats(dir, mode.serverConfig);
    const url = server.url;
    const creds = file('app.creds', mode.userCreds('ratelimit'));
    const outputs = [
      await servesEndToEnd(
        join(root, 'creds-ok'),
        { NATS_URL: url, NATS_CREDS: creds },
        {
          servers: url,
          authenticator: credsAuthenticator(new TextEncoder().encode(mode.userCreds('test'))),
        },
      ),
      await refused('limiter', 'creds-stranger', {
        NATS_URL: url,
        NATS_CREDS: file('stranger.creds', mode.strangerCreds('stranger')),
      }),
    ];
    // No nkey seed (SU + 56 base32 characters) in any output.
    for (const output of outputs) expect(output).not.toMatch(/SU[A-Z2-7]{56}/);
  });
});

describe('contradictions stop the process at start, naming the variable', () => {
  it.each([
    [{ NATS_USER: 'ratelimit' }, 'NATS_USER is set without NATS_PASSWORD'],
    [{ NATS_TOKEN: TOKEN, NATS_USER: 'u', NATS_PASSWORD: PASSWORD }, 'NATS_TOKEN and NATS_USER'],
    [{ NATS_CREDS: '/nonexistent/app.creds' }, 'NATS_CREDS: cannot read /nonexistent/app.creds'],
  ])('%j', async (env, message) => {
    const start = startLimiter({ NATS_URL: 'nats://127.0.0.1:4222', DATA_DIR: root, ...env });
    await expect(start).rejects.toThrow(/limiter exited 1/);
    const error = (await start.catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(message);
    expect(error.message).not.toContain(PASSWORD);
    expect(error.message).not.toContain(TOKEN);
  });
});
