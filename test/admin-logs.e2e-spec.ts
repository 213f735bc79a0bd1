/**
 * The admin's logs as an operator ships them (issue 12 point 5): the real admin with its stdout
 * piped, real NATS and SQLite. Every line is JSON without an ANSI code; the start line names the
 * port really bound; a refused operation writes one warning (no stack) with the client and the
 * correlation id, rate-limited; SIGTERM writes one line with what shutdown waited for.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gql, gqlData, startAdmin, type AdminProcess } from './support/admin-process';
import { uniquePrefix } from './support/limiter-process';
import { expectBoundedFlood } from './support/log-flood';
import { lineLogged, logLines } from './support/log-lines';

jest.setTimeout(180_000);

const ESC = '\u001b';
const UPSERT = 'mutation U($input: QuotaInput!) { upsertQuota(input: $input) { name version } }';
const badQuota = { name: 'api', limits: [{ name: 'rps', limit: -1, window: '1s' }] };

describe("the admin's logs", () => {
  const dir = mkdtempSync(join(tmpdir(), 'admin-logs-'));
  let admin: AdminProcess;

  beforeAll(async () => {
    admin = await startAdmin({
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
      NATS_URL: 'nats://127.0.0.1:4222',
      NATS_SUBJECT_PREFIX: uniquePrefix(),
      DATA_DIR: dir,
    });
  });

  afterAll(async () => {
    await admin?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the port it bound with ADMIN_PORT=0, and writes every line as JSON', async () => {
    expect(logLines(admin.output()).find((l) => l.msg.startsWith('listening on '))).toMatchObject({
      context: 'Admin',
      address: '127.0.0.1',
      port: admin.port,
    });
    expect((await fetch(`http://127.0.0.1:${admin.port}/healthz`)).status).toBe(200);
    expect(admin.output()).not.toContain(ESC);
    for (const line of logLines(admin.output())) {
      expect(line).toMatchObject({
        app: 'admin',
        time: expect.any(String),
        msg: expect.any(String),
      });
    }
  });

  it('logs bad input once, as a warning naming the field, the client and the correlation id', async () => {
    const result = await gql(
      admin.url,
      UPSERT,
      { input: badQuota },
      { 'x-correlation-id': 'adm-1' },
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const line = await lineLogged(admin, 'adm-1', (l) => l['correlationId'] === 'adm-1');
    expect(line).toMatchObject({
      level: 'warn',
      context: 'GraphQL',
      kind: 'graphql.refused',
      code: 'BAD_USER_INPUT',
      field: 'input.limits[0].limit',
      rootField: 'upsertQuota',
      operation: 'mutation',
      client: '127.0.0.1',
    });
    expect(line).not.toHaveProperty('err');
    // Nest's own handler, which wrote each one with its stack, does not see it.
    expect(logLines(admin.output()).filter((l) => l.context === 'ExceptionsHandler')).toEqual([]);
  });

  it('logs operations refused before any resolver runs (limits, validation), once each', async () => {
    const aliases = Array.from({ length: 200 }, (_, i) => `a${i}: quotas { name }`).join(' ');
    const tooComplex = await gql(admin.url, `{ ${aliases} }`, {}, { 'x-correlation-id': 'adm-2' });
    expect(tooComplex.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    expect(await lineLogged(admin, 'adm-2', (l) => l['correlationId'] === 'adm-2')).toMatchObject({
      level: 'warn',
      kind: 'graphql.refused',
      code: 'QUERY_TOO_COMPLEX',
      client: '127.0.0.1',
    });
    const invalid = await gql(admin.url, '{ noSuchField }', {}, { 'x-correlation-id': 'adm-3' });
    expect(invalid.errors?.[0]?.message).toMatch(/noSuchField/);
    expect(await lineLogged(admin, 'adm-3', (l) => l['correlationId'] === 'adm-3')).toMatchObject({
      level: 'warn',
      kind: 'graphql.refused',
      code: 'GRAPHQL_VALIDATION_FAILED',
    });
    expect(logLines(admin.output()).filter((l) => l['correlationId'] === 'adm-3')).toHaveLength(1);
  });

  it('writes a bounded number of lines for 500 bad mutations', async () => {
    const written = await expectBoundedFlood(
      admin,
      'graphql.refused',
      500,
      async (i) => {
        const result = await gql(
          admin.url,
          UPSERT,
          { input: badQuota },
          {
            'x-correlation-id': `adm-flood-${i}`,
          },
        );
        expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      },
      10,
    );
    for (const line of written) expect(line['correlationId']).toMatch(/^adm-flood-\d+$/);
  });

  it('writes at SIGTERM what shutdown waited for, the NATS connection drained', async () => {
    const quota = { name: 'api', limits: [{ name: 'rps', limit: 5, window: '1s' }] };
    await gqlData(admin.url, UPSERT, { input: quota });
    expect(await admin.stop('SIGTERM')).toBe(0);
    const last = logLines(admin.output()).at(-1);
    expect(last).toMatchObject({
      level: 'info',
      context: 'Admin',
      controlWrites: 0,
      controlWritesLeft: 0,
      unpublished: false,
      nats: 'drained',
      exitCode: 0,
      drainMs: expect.any(Number),
      msg: expect.stringMatching(
        /^shut down in \d+ ms: 0 control writes waited for \(0 unfinished\), every change published, NATS drained$/,
      ),
    });
  });
});
