/**
 * Issue 11 point 7: what one GraphQL operation may cost the admin. Real admin processes (SQLite,
 * NATS under a prefix of their own): floods of aliases are refused before they run, a list costs
 * what it can return, quotas can be paged, subscriptions are held to the same limits, and an
 * operation has a deadline.
 */
import { controlNames } from '@app/contracts';
import { getIntrospectionQuery } from 'graphql';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import {
  collect,
  gql,
  gqlData,
  IMPORT_DOCUMENT,
  quotaDocument,
  startAdmin,
  subscriptionClient,
  type AdminProcess,
  type GqlResult,
} from './support/admin-process';
import { limiterReportHeaders } from './support/control-keys';
import { sleep } from './support/limiter-http';
import { uniquePrefix } from './support/limiter-process';

jest.setTimeout(180_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const prefix = uniquePrefix();
const hastyPrefix = uniquePrefix();
const dirs = [mkdtempSync(join(tmpdir(), 'limits-a-')), mkdtempSync(join(tmpdir(), 'limits-b-'))];
/** Quotas stored before the flood tests, then STORED after. */
const FIRST = 50;
const STORED = 2_000;
const OPERATION_TIMEOUT_MS = 300;

const names = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `q${String(from + i).padStart(5, '0')}`);

const aliases = (n: number, field: string) =>
  Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ');

function refused(result: GqlResult, message: RegExp): void {
  expect(result.data ?? null).toBeNull();
  expect(result.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
  expect(result.errors?.[0]?.message).toMatch(message);
}

let admin: AdminProcess;
/** With a short ADMIN_OPERATION_TIMEOUT_MS. */
let hasty: AdminProcess;
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connect({ servers: NATS_URL });
  const env = { NATS_URL, NATS_SUBJECT_PREFIX: prefix };
  [admin, hasty] = await Promise.all([
    startAdmin({ ...env, DATA_DIR: dirs[0]! }),
    startAdmin({
      NATS_URL,
      NATS_SUBJECT_PREFIX: hastyPrefix,
      DATA_DIR: dirs[1]!,
      ADMIN_OPERATION_TIMEOUT_MS: String(OPERATION_TIMEOUT_MS),
    }),
  ]);
  await gqlData(admin.url, IMPORT_DOCUMENT, { d: quotaDocument(names(0, FIRST)) });
});

afterAll(async () => {
  await Promise.all([admin?.stop(), hasty?.stop()]);
  const jsm = await nc.jetstreamManager();
  for (const p of [prefix, hastyPrefix]) {
    await jsm.streams.delete(`KV_${controlNames(p).bucket}`).catch(() => undefined);
  }
  await nc.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('floods of aliases', () => {
  it('refuses 4 999 aliases of quotas, and 100, with a clear error before they run', async () => {
    refused(await gql(admin.url, `{ ${aliases(4_999, 'quotas { name }')} }`), /tokens/);
    refused(
      await gql(admin.url, `{ ${aliases(100, 'quotas { name }')} }`),
      /100 root fields \(aliases included\); at most 20/,
    );
    // Aliases behind a fragment count the same.
    refused(
      await gql(admin.url, `{ ...F } fragment F on Query { ${aliases(30, 'stats { at }')} }`),
      /30 root fields/,
    );
    refused(await gql(admin.url, `{ ${aliases(2_000, '__typename')} }`), /tokens/);
    // Fragments each spread twice by the one before: 2^30 fields, in 30 lines.
    const bomb = Array.from(
      { length: 30 },
      (_, i) => `fragment F${i} on Quota { name ${i < 29 ? `...F${i + 1} ...F${i + 1}` : ''} }`,
    );
    refused(
      await gql(admin.url, `{ quotas { ...F0 } } ${bomb.join(' ')}`),
      /selections with its fragments spread out/,
    );
  });

  it('refuses a flood of aliased mutations before any of them runs', async () => {
    const deletes = names(0, 30).map((name, i) => `d${i}: deleteQuota(name: "${name}")`);
    refused(await gql(admin.url, `mutation { ${deletes.join(' ')} }`), /30 root fields/);
    const stored = await gqlData<{ quotas: unknown[] }>(admin.url, '{ quotas { name } }');
    expect(stored.quotas).toHaveLength(FIRST);
  });
});

describe('lists cost what they can return', () => {
  beforeAll(async () => {
    await gqlData(admin.url, IMPORT_DOCUMENT, { d: quotaDocument(names(FIRST, STORED)) });
  });

  it('refuses aliases of a list of every quota, and says how to page', async () => {
    const wide = `{ ${aliases(15, 'quotas { name match limits { name limit } }')} }`;
    refused(await gql(admin.url, wide), /query cost \d+ is above the maximum 50000.*quotas\(first/);
  });

  it('answers a console-sized query, and GraphiQL’s introspection', async () => {
    const page = await gqlData<{ quotas: unknown[]; auditLog: unknown[] }>(
      admin.url,
      `{
        quotas(first: 500) {
          name match version updatedAt scope shadow onStoreFailure lease
          limits { name unit limit windowMs algorithm burst align timezone }
          queue { maxSize maxWaitMs } concurrency { max leaseTtlMs }
        }
        providers { name enabled models { model maxRpm maxTpm maxRpd } }
        stats { at replicas quotas { quota approved denied queued activeKeys } }
        auditLog(limit: 100) { id at actor action target }
      }`,
    );
    expect(page.quotas).toHaveLength(500);
    const all = await gqlData<{ quotas: unknown[] }>(
      admin.url,
      '{ quotas { name match version } }',
    );
    expect(all.quotas).toHaveLength(STORED);
    const schema = await gqlData<{ __schema: { types: unknown[] } }>(
      admin.url,
      getIntrospectionQuery(),
    );
    expect(schema.__schema.types.length).toBeGreaterThan(10);
  });

  it('pages through quotas by name with first and after', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const data: { quotas: { name: string }[] } = await gqlData(
        admin.url,
        'query P($after: String) { quotas(first: 700, after: $after) { name } }',
        { after },
      );
      seen.push(...data.quotas.map((q) => q.name));
      if (data.quotas.length < 700) break;
      after = data.quotas.at(-1)!.name;
    }
    expect(seen).toEqual(names(0, STORED));
    for (const first of [0, 1001]) {
      const bad = await gql(admin.url, `{ quotas(first: ${first}) { name } }`);
      expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(bad.errors?.[0]?.extensions?.issues?.[0]?.field).toBe('first');
    }
  });

  it('holds subscriptions to the same rules and costs', async () => {
    // A limiter replica that reports stats for 5 000 quotas.
    const report = {
      replica: 'fake-replica',
      at: Date.now(),
      quotas: Array.from({ length: 5_000 }, (_, i) => ({
        quota: `r${i}`,
        approved: 1,
        denied: 0,
        queued: 0,
        activeKeys: 1,
      })),
    };
    // Signed as a limiter signs its reports: the admin counts no other.
    const subject = controlNames(prefix).statsReport;
    const body = JSON.stringify(report);
    nc.publish(subject, body, {
      headers: limiterReportHeaders(subject, report.replica, 'fake-group', body),
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const stats = await gqlData<{ stats: { replicas: number } }>(
        admin.url,
        '{ stats { replicas } }',
      );
      if (stats.stats.replicas === 1) break;
      if (Date.now() > deadline) throw new Error('the fake replica was not heard');
      await sleep(50);
    }

    const client = subscriptionClient(admin.url);
    try {
      const outcomes = [
        `subscription { statsUpdated { ${aliases(15, 'quotas { quota approved denied queued activeKeys }')} } }`,
        'subscription { a: statsUpdated { at } b: quotaChanged { name } }',
      ].map((query) => collect(client, query));
      const fine = collect<{ statsUpdated: { replicas: number } }>(
        client,
        'subscription { statsUpdated { replicas quotas { quota } } }',
      );
      const until = Date.now() + 10_000;
      while (
        outcomes.some((o) => o.errors.length === 0 && o.values.length === 0) ||
        fine.values.length === 0
      ) {
        if (Date.now() > until) throw new Error('no answer to the subscriptions');
        await sleep(20);
      }
      const [wide, two] = outcomes.map((o) => JSON.stringify(o.errors));
      expect(outcomes.every((o) => o.values.length === 0)).toBe(true);
      expect(wide).toMatch(/query cost \d+ is above the maximum/);
      expect(two).toMatch(/only one top level field/i);
      expect(fine.errors).toEqual([]);
      for (const o of [...outcomes, fine]) o.stop();
    } finally {
      await client.dispose();
    }
  });
});

describe('a deadline per operation (ADMIN_OPERATION_TIMEOUT_MS)', () => {
  /**
   * A limiter replica on NATS that hears keyStats and never answers, and answers resetKey at
   * once. The admin knows no live replica (no stats reports), so it waits its whole 1 s
   * (FAN_OUT_MAX_WAIT_MS) for answers either way: longer than the deadline, and timers fire in
   * the order they expire however slow the machine.
   */
  beforeAll(() => {
    const names = controlNames(hastyPrefix);
    nc.subscribe(names.keyStats, { callback: () => undefined });
    nc.subscribe(names.resetKey, {
      callback: (_, msg) => msg.respond(JSON.stringify({ replica: 'fake', value: true })),
    });
  });

  it('answers a query still waiting at its deadline with OPERATION_TIMEOUT', async () => {
    const result = await gql(hasty.url, '{ keyStats(key: "k") { key } }');
    expect(result.errors?.[0]?.extensions?.code).toBe('OPERATION_TIMEOUT');
    expect(result.errors?.[0]?.message).toMatch(/within 300 ms \(ADMIN_OPERATION_TIMEOUT_MS\)/);
  });

  it('lets a mutation finish what it started, and starts nothing after the deadline', async () => {
    const result = await gql(
      hasty.url,
      `mutation {
        a: resetKey(key: "k") { reset }
        b: upsertQuota(input: { name: "late", limits: [{ name: "l", limit: 1, window: "1s" }] }) { name }
      }`,
    );
    // resetKey ran to its end (1 s, past the deadline); upsertQuota never started.
    expect(result.errors?.map((e) => [e.extensions?.code, e.path])).toEqual([
      ['OPERATION_TIMEOUT', ['b']],
    ]);
    const stored = await gqlData<{ quota: unknown }>(hasty.url, '{ quota(name: "late") { name } }');
    expect(stored.quota).toBeNull();
    const log = await gqlData<{ auditLog: { action: string }[] }>(
      hasty.url,
      '{ auditLog(limit: 5) { action } }',
    );
    expect(log.auditLog.map((e) => e.action)).toEqual(['resetKey']);
  });
});
