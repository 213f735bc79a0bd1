/**
 * The admin's GraphQL surface in-process over a real SQLite file, without NATS: input validation
 * (many bad inputs, nothing stored), query limits, production hardening, error codes, and what
 * `viewer` tells each credential.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdminApp } from '../apps/admin/src/app';
import { readAdminSettings } from '../apps/admin/src/settings/admin-settings';
import { gql, gqlData, type GqlResult } from './support/admin-process';

jest.setTimeout(120_000);

interface Running {
  app: NestFastifyApplication;
  url: string;
  dir: string;
}

async function start(env: Record<string, string> = {}): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'admin-api-'));
  const settings = readAdminSettings({ NATS_URL: '', DATA_DIR: dir, ...env });
  const app = await createAdminApp({ logger: false }, settings);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { app, url: `http://127.0.0.1:${port}`, dir };
}

async function stop(r: Running | undefined): Promise<void> {
  if (r === undefined) return;
  await r.app.close();
  rmSync(r.dir, { recursive: true, force: true });
}

const UPSERT = 'mutation U($input: QuotaInput!) { upsertQuota(input: $input) { name version } }';

interface ViewerAnswer {
  viewer: { credential: string; name: string | null; canWrite: boolean };
}

function bearer(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

/** `viewer` as `token` sees it (no Authorization header when undefined). */
function viewerAs(url: string, token?: string): Promise<GqlResult<ViewerAnswer>> {
  return gql<ViewerAnswer>(url, '{ viewer { credential name canWrite } }', {}, bearer(token));
}

/**
 * Whether a mutation of `token` gets past the token check: deleting a quota that does not exist
 * then answers NOT_FOUND (and changes nothing), else UNAUTHENTICATED.
 */
async function mayWrite(url: string, token?: string): Promise<boolean> {
  const result = await gql(
    url,
    'mutation { deleteQuota(name: "no-such-quota") }',
    {},
    bearer(token),
  );
  const code = result.errors?.[0]?.extensions?.code;
  expect(['NOT_FOUND', 'UNAUTHENTICATED']).toContain(code);
  return code === 'NOT_FOUND';
}

/**
 * viewer answers `credential` and the token's `name` to `token`, and its canWrite is what a real
 * mutation finds.
 */
async function expectViewer(
  url: string,
  token: string | undefined,
  credential: string,
  name: string | null = null,
) {
  const canWrite = await mayWrite(url, token);
  expect(await viewerAs(url, token)).toEqual({
    status: 200,
    data: { viewer: { credential, name, canWrite } },
  });
  return canWrite;
}

describe('admin GraphQL API (development mode)', () => {
  let r: Running;
  beforeAll(async () => (r = await start()));
  afterAll(() => stop(r));

  it('names every bad field of a quota and stores nothing', async () => {
    const bad = await gql(r.url, UPSERT, {
      input: {
        name: 'x y',
        match: 're:(',
        limits: [{ name: 'rps', limit: 10, window: '1x', algorithm: 'token_bucket', precision: 5 }],
        queue: { maxSize: -1, maxWaitMs: 10 },
      },
    });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const fields = bad.errors?.[0]?.extensions?.issues?.map((i) => i.field) ?? [];
    expect(fields).toEqual(
      expect.arrayContaining(['input.name', 'input.limits[0].window', 'input.queue.maxSize']),
    );
    const none = await gqlData<{ quotas: unknown[] }>(r.url, '{ quotas { name } }');
    expect(none.quotas).toEqual([]);
  });

  it("answers each limit's window as the input spells it, which reads back as the same windowMs", async () => {
    interface Read {
      quotas: { name: string; limits: { name: string; windowMs: number; window: string }[] }[];
    }
    const limitsOf = async (name: string): Promise<Read['quotas'][number]['limits']> => {
      const read = await gqlData<Read>(
        r.url,
        '{ quotas { name limits { name windowMs window } } }',
      );
      return read.quotas.find((q) => q.name === name)?.limits ?? [];
    };
    const given = [
      { name: 'a', limit: 1, window: '1s' },
      { name: 'b', limit: 1, window: '1h30m' },
      { name: 'c', limit: 1, window: '1500ms' },
      { name: 'd', limit: 1, windowMs: 86_400_000 },
      { name: 'e', limit: 1, windowMs: 61_001 },
      { name: 'f', limit: 1, window: '120s' },
    ];
    await gqlData(r.url, UPSERT, { input: { name: 'windows', limits: given } });
    const answered = await limitsOf('windows');
    expect(answered).toEqual([
      { name: 'a', windowMs: 1_000, window: '1s' },
      { name: 'b', windowMs: 5_400_000, window: '90m' },
      { name: 'c', windowMs: 1_500, window: '1500ms' },
      { name: 'd', windowMs: 86_400_000, window: '1d' },
      { name: 'e', windowMs: 61_001, window: '61001ms' },
      { name: 'f', windowMs: 120_000, window: '2m' },
    ]);
    // Round trip: each answered window, given back as input, is the same windowMs.
    const again = answered.map((l) => ({ name: l.name, limit: 1, window: l.window }));
    await gqlData(r.url, UPSERT, { input: { name: 'windows-again', limits: again } });
    expect(await limitsOf('windows-again')).toEqual(answered);
    await gqlData(r.url, 'mutation { deleteQuota(name: "windows") }');
    await gqlData(r.url, 'mutation { deleteQuota(name: "windows-again") }');
  });

  it('refuses a match pattern another quota has, and the default quota with a match', async () => {
    await gqlData(r.url, UPSERT, {
      input: { name: 'a', match: 'a-*', limits: [{ name: 'l', limit: 1, windowMs: 1000 }] },
    });
    const clash = await gql(r.url, UPSERT, {
      input: { name: 'b', match: 'a-*', limits: [{ name: 'l', limit: 1, windowMs: 1000 }] },
    });
    expect(clash.errors?.[0]?.message).toContain('input.match: is the same pattern as quota "a"');
    const def = await gql(r.url, UPSERT, {
      input: { name: 'default', match: 'x', limits: [{ name: 'l', limit: 1, windowMs: 1000 }] },
    });
    expect(def.errors?.[0]?.message).toContain('input.match');
    await gqlData(r.url, 'mutation { deleteQuota(name: "a") }');
  });

  it('stores lease off as given, answers auto when the input left it out, refuses other modes', async () => {
    const limits = [{ name: 'l', limit: 1, windowMs: 1000 }];
    await gqlData(r.url, UPSERT, {
      input: { name: 'hot', scope: 'cluster', lease: 'off', limits },
    });
    await gqlData(r.url, UPSERT, { input: { name: 'plain', scope: 'cluster', limits } });
    const read = await gqlData<{ quotas: { name: string; lease: string }[] }>(
      r.url,
      '{ quotas { name lease } }',
    );
    expect(read.quotas).toEqual([
      { name: 'hot', lease: 'off' },
      { name: 'plain', lease: 'auto' },
    ]);
    const bad = await gql(r.url, UPSERT, { input: { name: 'x', lease: 'on', limits } });
    expect(bad.errors?.[0]?.message).toMatch(/lease/);
    const yaml =
      'quotas: [{ name: imported, lease: sometimes, limits: [{ name: l, limit: 1, window: 1s }] }]';
    const imported = await gql(
      r.url,
      'mutation I($d: String!) { importConfig(document: $d, format: yaml) { quotas } }',
      { d: yaml },
    );
    expect(imported.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(imported.errors?.[0]?.message).toMatch(
      /quotas\[0\]\.lease: line 1: must be one of: auto, off/,
    );
    await gqlData(r.url, 'mutation { deleteQuota(name: "hot") }');
    await gqlData(r.url, 'mutation { deleteQuota(name: "plain") }');
  });

  it('survives many random quota inputs; only valid ones are stored, each once', async () => {
    const limit = fc.record(
      {
        name: fc.oneof(fc.constantFrom('rps', 'tpm', ''), fc.string({ maxLength: 8 })),
        unit: fc.oneof(fc.constantFrom('requests', 'tokens', 'Bad'), fc.string({ maxLength: 4 })),
        limit: fc.oneof(fc.integer({ min: -5, max: 1000 }), fc.constant(2 ** 53 - 1)),
        windowMs: fc.integer({ min: -10, max: 100_000_000 }),
        window: fc.constantFrom('1s', '1m', '1d', '0s', 'abc', ''),
        algorithm: fc.constantFrom('fixed_window', 'sliding_window', 'token_bucket'),
        burst: fc.integer({ min: -1, max: 2000 }),
        align: fc.constant('calendar'),
        timezone: fc.constantFrom('UTC', 'America/Los_Angeles', 'Mars/Base'),
        precision: fc.integer({ min: -1, max: 200 }),
      },
      { requiredKeys: ['name', 'limit'] },
    );
    const input = fc.record(
      {
        name: fc.oneof(fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/), fc.string({ maxLength: 10 })),
        match: fc.oneof(
          fc.constantFrom('api-*', 're:^x', 're:(', '*'),
          fc.string({ maxLength: 6 }),
        ),
        limits: fc.array(limit, { maxLength: 3 }),
        queue: fc.record({
          maxSize: fc.integer({ min: -2, max: 500 }),
          maxWaitMs: fc.integer({ min: -2, max: 60_000 }),
        }),
        concurrency: fc.record({
          max: fc.integer({ min: -1, max: 50 }),
          leaseTtlMs: fc.integer({ min: -1, max: 60_000 }),
        }),
        scope: fc.constantFrom('local', 'cluster'),
        onStoreFailure: fc.constantFrom('closed', 'open', 'local'),
        lease: fc.constantFrom('auto', 'off', 'on'),
        shadow: fc.boolean(),
      },
      { requiredKeys: ['name', 'limits'] },
    );
    const stored = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(input, async (candidate) => {
        const result = await gql<{ upsertQuota: { name: string; version: number } }>(
          r.url,
          UPSERT,
          { input: candidate },
        );
        if (result.data?.upsertQuota) {
          const { name, version } = result.data.upsertQuota;
          stored.set(name, version);
        } else {
          expect(result.errors?.length).toBeGreaterThan(0);
          const code = result.errors?.[0]?.extensions?.code;
          expect(['BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED', undefined]).toContain(code);
          expect(result.errors?.[0]?.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
    const listed = await gqlData<{ quotas: { name: string; version: number }[] }>(
      r.url,
      '{ quotas { name version } }',
    );
    expect(new Map(listed.quotas.map((q) => [q.name, q.version]))).toEqual(stored);
    expect((await fetch(`${r.url}/healthz`)).status).toBe(200);
  });

  it('validates provider mutations, auditLog limits and unknown names', async () => {
    const model = await gql(
      r.url,
      'mutation { setModelQuota(provider: "Open AI", model: "m", maxRpm: -1, maxTpm: 0, maxRpd: 0) { name } }',
    );
    const fields = model.errors?.[0]?.extensions?.issues?.map((i) => i.field);
    expect(fields).toEqual(['provider', 'maxRpm']);
    const audit = await gql(r.url, '{ auditLog(limit: 0) { id } }');
    expect(audit.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const missing = await gql(r.url, 'mutation { deleteQuota(name: "never") }');
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const key = await gql(r.url, '{ keyStats(key: "") { key } }');
    expect(key.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const offline = await gql(r.url, '{ keyStats(key: "k") { key } }');
    expect(offline.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
    const doc = await gql(
      r.url,
      'mutation { importConfig(document: "quotas: [ {", format: yaml) { source } }',
    );
    expect(doc.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(doc.errors?.[0]?.message).toMatch(/line \d/);
    // An import is held to upsertQuota's rules: a quota with no limits is refused there too.
    const empty = await gql(
      r.url,
      'mutation { importConfig(document: "quotas: [{ name: bare, match: bare-*, limits: [] }]", format: yaml) { quotas } }',
    );
    expect(empty.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(empty.errors?.[0]?.message).toMatch(/quotas\[0\]\.limits: needs at least one limit/);
    const stored = await gql(r.url, '{ quota(name: "bare") { name } }');
    expect(stored.data).toEqual({ quota: null });
  });

  it('refuses queries above the depth and complexity limits', async () => {
    const deep = await gql(
      r.url,
      '{ quotas { limits { a { b { c { d { e { f { g } } } } } } } } }',
    );
    expect(deep.data ?? null).toBeNull();
    expect(deep.errors?.[0]?.message).toMatch(/9 fields deep; at most 8/);
    // The schema's own fields are measured by the lists they nest (each multiplies the work).
    const nested = await gql(
      r.url,
      '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }',
    );
    expect(nested.data ?? null).toBeNull();
    expect(nested.errors?.[0]?.message).toMatch(/nests 4 lists of the schema/);
    const typeRef = await gql(
      r.url,
      '{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } }',
    );
    expect(typeRef.errors).toBeUndefined();
    const fields = 'id at actor action target before after';
    const pages = ['a', 'b', 'c', 'd', 'e', 'f'].map(
      (a) => `${a}: auditLog(limit: 1000) { ${fields} }`,
    );
    const wide = await gql(r.url, `{ ${pages.join(' ')} }`);
    expect(wide.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    const fine = await gql(r.url, `{ auditLog(limit: 1000) { ${fields} } }`);
    expect(fine.errors).toBeUndefined();
    const intro = await gql(r.url, '{ __schema { queryType { name } } }');
    expect(intro.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });

  it('refuses a subscription sent over HTTP, saying where subscriptions are served', async () => {
    const post = async (query: string, operationName?: string) => {
      const res = await fetch(`${r.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, operationName }),
      });
      return { status: res.status, ...((await res.json()) as Omit<GqlResult, 'status'>) };
    };
    const both = 'query Names { quotas { name } } subscription Changes { quotaChanged { name } }';
    for (const refused of [
      await post('subscription { quotaChanged { name } }'),
      await post(both, 'Changes'),
    ]) {
      expect(refused.status).toBe(400);
      expect(refused.data ?? null).toBeNull();
      expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
      expect(refused.errors?.[0]?.message).toMatch(/WebSocket on \/graphql \(graphql-ws/);
    }
    // The query of the same document is still answered.
    expect(await post(both, 'Names')).toMatchObject({ status: 200, data: { quotas: [] } });
  });

  it('answers viewer without tokens: anyone may write, whatever token it brings', async () => {
    expect(await expectViewer(r.url, undefined, 'none')).toBe(true);
    expect(await expectViewer(r.url, 'some-token', 'unknown')).toBe(true);
  });
});

const IN_FORCE =
  '{ quotasInForce { name source provider match limits { limit windowMs } limitsKnown readOnly overrideHint reported } }';

interface InForce {
  name: string;
  source: string;
  provider: string | null;
  match: string | null;
  limits: { limit: number; windowMs: number }[] | null;
  limitsKnown: boolean;
  readOnly: boolean;
  overrideHint: string | null;
  reported: boolean;
}

describe('admin GraphQL API: quotasInForce', () => {
  let r: Running;
  beforeAll(async () => (r = await start()));
  afterAll(() => stop(r));

  const inForce = async (): Promise<InForce[]> =>
    (await gqlData<{ quotasInForce: InForce[] }>(r.url, IN_FORCE)).quotasInForce;

  it('lists the built-in default with no admin quota, read-only, with how to override it', async () => {
    expect(await inForce()).toEqual([
      {
        name: 'default',
        source: 'default',
        provider: null,
        match: null,
        limits: [{ limit: 100, windowMs: 1000 }],
        limitsKnown: false,
        readOnly: true,
        overrideHint: expect.stringMatching(/admin quota named `default`/) as unknown,
        reported: false, // no limiter reports without NATS
      },
    ]);
  });

  it('lists admin quotas, enabled model quotas and the default, each with its source', async () => {
    await gqlData(r.url, UPSERT, {
      input: { name: 'api', match: 'api-*', limits: [{ name: 'rps', limit: 7, window: '1s' }] },
    });
    await gqlData(
      r.url,
      'mutation { setModelQuota(provider: "inforce", model: "m-1", maxRpm: 5, maxTpm: 0, maxRpd: 0) { name } }',
    );
    await gqlData(
      r.url,
      'mutation { setModelQuota(provider: "inforce", model: "m-2", maxRpm: 6, maxTpm: 0, maxRpd: 0) { name } }',
    );
    // Disabled: its models are not in force.
    expect((await inForce()).map((q) => q.name)).toEqual(['api', 'default']);
    await gqlData(
      r.url,
      'mutation { setProviderEnabled(name: "inforce", enabled: true) { name } }',
    );
    // An admin quota of a model's name serves that model instead.
    await gqlData(r.url, UPSERT, {
      input: { name: 'm-2', limits: [{ name: 'rpm', limit: 60, window: '1m' }] },
    });
    const quotas = await inForce();
    expect(quotas.map((q) => [q.name, q.source, q.readOnly])).toEqual([
      ['api', 'admin', false],
      ['default', 'default', true],
      ['m-1', 'provider_model', true],
      ['m-2', 'admin', false],
    ]);
    const api = quotas.find((q) => q.name === 'api');
    expect(api).toMatchObject({ match: 'api-*', limits: [{ limit: 7, windowMs: 1000 }] });
    expect(api).toMatchObject({ limitsKnown: true, overrideHint: null });
    const model = quotas.find((q) => q.name === 'm-1');
    expect(model).toMatchObject({ provider: 'inforce', limitsKnown: true });
    expect(model?.limits).toContainEqual({ limit: 5, windowMs: 60_000 });
    expect(model?.overrideHint).toMatch(/Providers page.*admin quota named m-1/);
  });

  it('shows an admin quota named default in place of the built-in one', async () => {
    await gqlData(r.url, UPSERT, {
      input: { name: 'default', limits: [{ name: 'rps', limit: 3, window: '1s' }] },
    });
    const shown = (await inForce()).filter((q) => q.name === 'default');
    expect(shown).toEqual([
      expect.objectContaining({
        source: 'admin',
        readOnly: false,
        limits: [{ limit: 3, windowMs: 1000 }],
      }),
    ]);
  });
});

describe('admin GraphQL API (development mode, ADMIN_READ_TOKEN set)', () => {
  const READ = 'read-secret';
  const ADMIN = 'admin-secret';
  let r: Running;
  beforeAll(async () => (r = await start({ ADMIN_READ_TOKEN: READ, ADMIN_TOKEN: ADMIN })));
  afterAll(() => stop(r));

  it('refuses introspection without the read token, and answers it with one', async () => {
    const queries = [
      '{ __schema { queryType { name } } }',
      '{ __type(name: "Quota") { name } }',
      '{ ...Intro } fragment Intro on Query { __schema { types { name } } }',
    ];
    for (const query of queries) {
      const anonymousOrWrong: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }];
      for (const headers of anonymousOrWrong) {
        const refused = await gql(r.url, query, {}, headers);
        expect(refused.data ?? null).toBeNull();
        expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      }
      for (const token of [READ, ADMIN]) {
        const allowed = await gql(r.url, query, {}, { authorization: `Bearer ${token}` });
        expect(allowed.errors).toBeUndefined();
        expect(allowed.data).toBeDefined();
      }
    }
    const viaGet = await fetch(
      `${r.url}/graphql?query=${encodeURIComponent('{ __schema { queryType { name } } }')}`,
    );
    expect(JSON.stringify(await viaGet.json())).toMatch(/UNAUTHENTICATED/);
  });

  it('answers viewer to the admin and read tokens, and refuses it to the others', async () => {
    expect(await expectViewer(r.url, ADMIN, 'admin', 'admin')).toBe(true);
    expect(await expectViewer(r.url, READ, 'read', 'read')).toBe(false);
    for (const token of [undefined, 'wrong']) {
      const refused = await viewerAs(r.url, token);
      expect(refused.data ?? null).toBeNull();
      expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(await mayWrite(r.url, token)).toBe(false);
    }
  });
});

describe('admin GraphQL API (development mode, ADMIN_TOKEN set, reads open)', () => {
  const ADMIN = 'admin-secret';
  let r: Running;
  beforeAll(async () => (r = await start({ ADMIN_TOKEN: ADMIN })));
  afterAll(() => stop(r));

  it('answers viewer to every request; only the admin token may write', async () => {
    expect(await expectViewer(r.url, ADMIN, 'admin', 'admin')).toBe(true);
    expect(await expectViewer(r.url, undefined, 'none')).toBe(false);
    expect(await expectViewer(r.url, 'wrong', 'unknown')).toBe(false);
  });
});

describe('admin GraphQL API (named tokens: ADMIN_TOKENS, ADMIN_READ_TOKENS)', () => {
  const ALICE = 'alice-token-0123456789';
  const DEPLOY = 'deploy-token-0123456789';
  const GRAFANA = 'grafana-token-0123456789';
  const ADMIN = 'admin-secret';
  let r: Running;
  beforeAll(
    async () =>
      (r = await start({
        ADMIN_TOKEN: ADMIN,
        ADMIN_TOKENS: `alice:${ALICE},deploy-bot:${DEPLOY}`,
        ADMIN_READ_TOKENS: `grafana:${GRAFANA}`,
      })),
  );
  afterAll(() => stop(r));

  it('answers viewer with the name of each token', async () => {
    expect(await expectViewer(r.url, ALICE, 'admin', 'alice')).toBe(true);
    expect(await expectViewer(r.url, DEPLOY, 'admin', 'deploy-bot')).toBe(true);
    expect(await expectViewer(r.url, ADMIN, 'admin', 'admin')).toBe(true);
    expect(await expectViewer(r.url, GRAFANA, 'read', 'grafana')).toBe(false);
  });

  it('records the name of the token as the actor, whatever X-Actor claims', async () => {
    const input = (limit: number) => ({
      name: 'audited',
      match: 'audited-*',
      limits: [{ name: 'rps', limit, window: '1s' }],
    });
    const claims = { 'x-actor': 'alice' };
    await gqlData(r.url, UPSERT, { input: input(1) }, { ...bearer(DEPLOY), ...claims });
    await gqlData(r.url, UPSERT, { input: input(2) }, { ...bearer(ADMIN), ...claims });
    await gqlData(r.url, UPSERT, { input: input(3) }, { ...bearer(ALICE), 'x-actor': 'bob' });
    const refused = await gql(
      r.url,
      UPSERT,
      { input: input(4) },
      { ...bearer(GRAFANA), ...claims },
    );
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const { auditLog } = await gqlData<{ auditLog: { actor: string; target: string }[] }>(
      r.url,
      '{ auditLog(limit: 10) { actor target } }',
      {},
      bearer(GRAFANA),
    );
    expect(auditLog.filter((e) => e.target === 'audited').map((e) => e.actor)).toEqual([
      'alice',
      'admin',
      'deploy-bot',
    ]);
  });
});

describe('admin GraphQL API (NODE_ENV=production)', () => {
  let r: Running;
  beforeAll(async () => (r = await start({ NODE_ENV: 'production' })));
  afterAll(() => stop(r));

  it('turns introspection and GraphiQL off', async () => {
    const intro = await gql(r.url, '{ __schema { queryType { name } } }');
    expect(intro.data ?? null).toBeNull();
    expect(JSON.stringify(intro.errors)).toMatch(/introspection/i);
    expect((await fetch(`${r.url}/graphiql`)).status).toBe(404);
    const normal = await gqlData<{ quotas: unknown[] }>(r.url, '{ quotas { name } }');
    expect(normal.quotas).toEqual([]);
  });
});
