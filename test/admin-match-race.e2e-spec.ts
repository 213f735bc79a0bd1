/**
 * Issue 11 point 10: a quota's `match` stays unique when writers race. A real admin (in this
 * process, over a SQLite file, publishing to NATS) and a real limiter process. Many upsertQuota
 * calls, and importConfig calls, with one pattern are started at once on the admin's services
 * (over HTTP each request happens to run its check and write before the next request is read,
 * which hides the race rather than preventing it): exactly one wins, the others are refused
 * naming `match`, and the limiter keeps taking the admin's control set.
 */
import { controlNames } from '@app/contracts';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { GraphQLError } from 'graphql';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { createAdminApp } from '../apps/admin/src/app';
import { ImportService } from '../apps/admin/src/import/import.service';
import { ImportFormat } from '../apps/admin/src/import/import.types';
import type { QuotaInput } from '../apps/admin/src/quotas/quota.inputs';
import { QuotaService } from '../apps/admin/src/quotas/quota.service';
import { readAdminSettings } from '../apps/admin/src/settings/admin-settings';
import { CONTROL_KEYS_ENV } from './support/control-keys';
import { post, sleep, type Json } from './support/limiter-http';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';

jest.setTimeout(120_000);

const prefix = uniquePrefix();
const dirs = [mkdtempSync(join(tmpdir(), 'race-admin-')), mkdtempSync(join(tmpdir(), 'race-lim-'))];
const common = { NATS_SUBJECT_PREFIX: prefix, NATS_URL: 'nats://127.0.0.1:4222' };
const RACERS = 24;
const ACTOR = 'race-test';

const quota = (name: string, match: string, limit = 5): QuotaInput => ({
  name,
  match,
  limits: [{ name: 'total', limit, windowMs: 60_000 }],
});

let admin: NestFastifyApplication;
let limiter: LimiterProcess;
let quotas: QuotaService;
let imports: ImportService;

beforeAll(async () => {
  limiter = await startLimiter({ ...common, DATA_DIR: dirs[1]! });
  // Signed as the limiter (started with the test keys) requires.
  const settings = readAdminSettings({ ...CONTROL_KEYS_ENV, ...common, DATA_DIR: dirs[0]! });
  admin = await createAdminApp({ logger: false }, settings);
  await admin.init();
  quotas = admin.get(QuotaService);
  imports = admin.get(ImportService);
});

afterAll(async () => {
  await Promise.all([admin?.close(), limiter?.stop()]);
  const nc = await connect({ servers: common.NATS_URL });
  const jsm = await nc.jetstreamManager();
  await jsm.streams.delete(`KV_${controlNames(prefix).bucket}`).catch(() => undefined);
  await nc.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Every refusal is BAD_USER_INPUT; answers the fields they name. */
function refusedFields(outcomes: readonly PromiseSettledResult<unknown>[]): string[] {
  return outcomes.flatMap((o) => {
    if (o.status === 'fulfilled') return [];
    const error = o.reason as GraphQLError;
    expect(error.extensions?.['code']).toBe('BAD_USER_INPUT');
    const issues = (error.extensions?.['issues'] ?? []) as { field: string }[];
    return issues.map((i) => i.field);
  });
}

async function owners(match: string): Promise<string[]> {
  return (await quotas.list()).filter((q) => q.match === match).map((q) => q.name);
}

/**
 * Makes one more change and waits until the limiter answers for it: the limiter applies the
 * bucket in order, so by then it has seen every earlier change. Answers its /readyz then.
 */
async function limiterCaughtUp(sentinel: string): Promise<Json> {
  await quotas.upsert(quota(sentinel, `${sentinel}-*`, 7), ACTOR);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ready = (await (await fetch(`${limiter.url}/readyz`)).json()) as Json;
    const reply = await post(limiter.url, '/v1/decide', { key: `${sentinel}-probe` });
    if (reply['quota'] === sentinel || ready['controlError'] !== undefined) return ready;
    if (Date.now() > deadline)
      throw new Error(`${sentinel} never in force: ${JSON.stringify(ready)}`);
    await sleep(20);
  }
}

describe('one match pattern, many writers at once', () => {
  it('upsertQuota: exactly one wins, the others are refused naming match', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: RACERS }, (_, i) => quotas.upsert(quota(`up${i}`, 'race-*'), ACTOR)),
    );
    const won = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.name] : []));
    expect(won).toHaveLength(1);
    expect(new Set(refusedFields(outcomes))).toEqual(new Set(['input.match']));
    expect(await owners('race-*')).toEqual(won);

    const ready = await limiterCaughtUp('after-upserts');
    expect(ready['controlError']).toBeUndefined();
    const reply = await post(limiter.url, '/v1/decide', { key: 'race-probe' });
    expect(reply['quota']).toBe(won[0]);
  });

  it('importConfig racing upsertQuota: one owner of the pattern, the limiter keeps taking sets', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: RACERS }, (_, i) =>
        i % 2 === 0
          ? quotas.upsert(quota(`mixed-up${i}`, 'mixed-*'), ACTOR)
          : imports.import(
              `quotas:\n  - { name: mixed-imp${i}, match: "mixed-*", limits: [{ name: total, limit: 5, window: 1m }] }`,
              ImportFormat.yaml,
              ACTOR,
            ),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const field of refusedFields(outcomes)) {
      expect(field).toMatch(/^(input|document: quotas\[0\])\.match$/);
    }
    expect(await owners('mixed-*')).toHaveLength(1);

    const ready = await limiterCaughtUp('after-imports');
    expect(ready['controlError']).toBeUndefined();
  });
});
