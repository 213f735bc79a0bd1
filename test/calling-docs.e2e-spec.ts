/**
 * docs/calling.md, "Calling the limiter", stays true: every ts and sh block of it is a marked copy
 * of a file under examples/calling/ (and every such file is shown), the README's excerpts are
 * lines of those files, and the examples run against two real limiter replicas sharing one queue
 * group, NATS and Redis, answering what the page says they answer.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { connect } from 'nats';
import { RATE_LIMIT_MODULE_OPTIONS } from '@ratelimit/client/nest';
import * as http from '../examples/calling/http';
import { AppModule } from '../examples/calling/nest-module';
import * as raw from '../examples/calling/raw-nats';
import { docBlocks, linesNotIn, readRepoFile, repoRoot } from './support/doc-blocks';
import { uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { startReplicas } from './support/replicas';

jest.setTimeout(120_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const PAGE = 'docs/calling.md';
const EXAMPLES = 'examples/calling';

describe('docs/calling.md shows the examples as they are', () => {
  const blocks = docBlocks(PAGE);

  it('every ts and sh block is marked with the file it copies, and equals that file', () => {
    const code = blocks.filter((b) => b.lang === 'ts' || b.lang === 'sh');
    expect(code.length).toBeGreaterThan(0);
    for (const block of code) {
      expect({ line: block.line, file: block.file, kind: block.kind }).toEqual({
        line: block.line,
        file: expect.stringMatching(/^examples\/calling\//),
        kind: 'copy',
      });
      expect({ file: block.file, text: block.text }).toEqual({
        file: block.file,
        text: readRepoFile(block.file!),
      });
    }
  });

  it('shows every file of examples/calling/', () => {
    const shown = new Set(blocks.map((b) => b.file));
    const files = readdirSync(join(repoRoot, EXAMPLES)).map((f) => `${EXAMPLES}/${f}`);
    expect(files.filter((f) => !shown.has(f))).toEqual([]);
  });

  it("the README's excerpts are lines of the files they name", () => {
    const excerpts = docBlocks('README.md').filter((b) => b.kind === 'excerpt');
    expect(excerpts.length).toBeGreaterThan(0);
    for (const block of excerpts) {
      expect({ files: block.files, missing: linesNotIn(block.text, block.files) }).toEqual({
        files: block.files,
        missing: [],
      });
    }
  });
});

/**
 * The default quota is 2 requests per sliding hour in cluster scope (exact across the two
 * replicas, with no window edge to straddle), and so is `api` (nest-module.ts names it); keys
 * `queued-*` have 1 per second and a queue.
 */
const twoPerHour = [{ name: 'per_hour', limit: 2, window: '1h', algorithm: 'sliding_window' }];
const config = {
  defaults: {
    limits: twoPerHour,
    scope: 'cluster',
  },
  quotas: [
    { name: 'api', limits: twoPerHour, scope: 'cluster' },
    {
      name: 'queued',
      match: 'queued-*',
      limits: [{ name: 'rps', limit: 1, window: '1s' }],
      queue: { maxSize: 10, maxWaitMs: 5000 },
      scope: 'cluster',
    },
  ],
};

describe('the examples of docs/calling.md against two limiter replicas', () => {
  const dir = mkdtempSync(join(tmpdir(), 'calling-'));
  const prefix = uniquePrefix();
  const limiters: LimiterProcess[] = [];
  const key = (): string => `user-${randomUUID()}`;

  beforeAll(async () => {
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify(config));
    await startReplicas(limiters, { prefix, configFile: file, dir });
  });

  afterAll(async () => {
    const codes = await Promise.all(limiters.map((l) => l.stop()));
    expect(codes).toEqual(limiters.map(() => 0));
    rmSync(dir, { recursive: true, force: true });
  });

  describe('raw NATS (raw-nats.ts)', () => {
    it('acquire: admitted twice, then RATE_LIMITED with a retryAfterMs', async () => {
      const k = key();
      const replies = [];
      for (let i = 0; i < 3; i++) replies.push(await raw.acquire(NATS_URL, prefix, k));
      expect(replies.map((r) => [r.allowed, r.code, r.remaining])).toEqual([
        [true, 'OK', 1],
        [true, 'OK', 0],
        [false, 'RATE_LIMITED', 0],
      ]);
      expect(replies[2]!.retryAfterMs).toBeGreaterThan(0);
    });

    it('acquire: bad input is INVALID_REQUEST naming the field, and charges nothing', async () => {
      const k = key();
      const bad = await raw.acquire(NATS_URL, prefix, k, -1);
      expect([bad.allowed, bad.code]).toEqual([false, 'INVALID_REQUEST']);
      expect(bad.reason).toMatch(/^cost/);
      expect((await raw.acquire(NATS_URL, prefix, k, 2)).remaining).toBe(0);
    });

    it('acquireBatch: one reply per entry, in order', async () => {
      const k = key();
      const replies = await raw.acquireBatch(NATS_URL, prefix, [k, k, k]);
      expect(replies.map((r) => r.code)).toEqual(['OK', 'OK', 'RATE_LIMITED']);
    });

    it('acquireWaiting: requests that may wait are admitted as the window turns', async () => {
      const k = `queued-${randomUUID()}`;
      expect((await raw.acquire(NATS_URL, prefix, k)).allowed).toBe(true);
      // One per second: of two waiting at once, at least one waits for a window to turn.
      const waited = await Promise.all([
        raw.acquireWaiting(NATS_URL, prefix, k, 3000),
        raw.acquireWaiting(NATS_URL, prefix, k, 3000),
      ]);
      expect(waited.map((r) => [r.allowed, r.code])).toEqual([
        [true, 'OK'],
        [true, 'OK'],
      ]);
      expect(Math.max(...waited.map((r) => r.waitedMs))).toBeGreaterThan(0);
    });

    it('acquireWithRetry: the retry gets the first answer and is charged once', async () => {
      const k = key();
      const requestId = `order-${randomUUID()}`;
      const [first, retry] = await raw.acquireWithRetry(NATS_URL, prefix, k, requestId);
      expect(retry).toEqual(first);
      expect([first!.requestId, first!.remaining]).toEqual([requestId, 1]);
      expect((await raw.acquire(NATS_URL, prefix, k)).code).toBe('OK');
    });

    it('acquireThenRelease: the released request is given back', async () => {
      const k = key();
      const { reply, released } = await raw.acquireThenRelease(NATS_URL, prefix, k);
      expect([reply.allowed, released]).toEqual([true, true]);
      const after = [
        await raw.acquire(NATS_URL, prefix, k),
        await raw.acquire(NATS_URL, prefix, k),
      ];
      expect(after.map((r) => r.code)).toEqual(['OK', 'OK']);
    });

    it('no limiter on the prefix: LimiterUnavailable(no-responders)', async () => {
      await expect(raw.acquire(NATS_URL, uniquePrefix(), key())).rejects.toMatchObject({
        constructor: raw.LimiterUnavailable,
        why: 'no-responders',
      });
    });

    it('a subscriber that never answers: LimiterUnavailable(timeout)', async () => {
      const silent = uniquePrefix();
      const nc = await connect({ servers: NATS_URL });
      try {
        nc.subscribe(`${silent}.acquire`);
        await nc.flush();
        await expect(raw.acquire(NATS_URL, silent, key())).rejects.toMatchObject({
          constructor: raw.LimiterUnavailable,
          why: 'timeout',
        });
      } finally {
        await nc.close();
      }
    });
  });

  describe('HTTP with fetch (http.ts)', () => {
    it('acquireOverHttp on either replica: 200, 200, then 429 with the RateLimit-* headers', async () => {
      const k = key();
      const urls = [limiters[0]!.url, limiters[1]!.url, limiters[0]!.url];
      const answers = [];
      for (const url of urls) answers.push(await http.acquireOverHttp(url, k));
      expect(
        answers.map((a) => [a.status, a.reply.code, a.headers.limit, a.headers.remaining]),
      ).toEqual([
        [200, 'OK', '2', '1'],
        [200, 'OK', '2', '0'],
        [429, 'RATE_LIMITED', '2', '0'],
      ]);
      expect(answers[0]!.headers.retryAfter).toBeNull();
      expect(Number(answers[2]!.headers.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(answers[2]!.headers.reset)).toBeGreaterThanOrEqual(1);
    });

    it('acquireBatchOverHttp: one reply per entry, in order', async () => {
      const k = key();
      const replies = await http.acquireBatchOverHttp(limiters[1]!.url, [k, k, k]);
      expect(replies.map((r) => r.code)).toEqual(['OK', 'OK', 'RATE_LIMITED']);
    });

    it('GoCC: acquireGocc gives a requestId, releaseGocc gives it back, then 2 more and a 429', async () => {
      const k = key();
      const url = limiters[0]!.url;
      const first = await http.acquireGocc(url, k);
      expect(first).toEqual({ allowed: true, requestId: expect.any(String) });
      expect(await http.releaseGocc(url, k, first.requestId!)).toBe(true);
      const after = [];
      for (let i = 0; i < 3; i++) after.push((await http.acquireGocc(url, k)).allowed);
      expect(after).toEqual([true, true, false]);
    });
  });

  describe('curl (curl.sh)', () => {
    const run = promisify(execFile);
    const curl = async (k: string): Promise<string> =>
      (
        await run('bash', [join(repoRoot, EXAMPLES, 'curl.sh')], {
          env: { ...process.env, LIMITER_URL: limiters[1]!.url, KEY: k },
          timeout: 30_000,
        })
      ).stdout;

    it('admits, then refuses the same key with 429 and Retry-After', async () => {
      const k = key();
      const first = await curl(k);
      expect(first).toMatch(/^HTTP\/1\.1 200 /m);
      expect(first).toMatch(/^ratelimit-remaining: 1\r?$/im);
      expect(first).toContain(`"key":"${k}"`);
      expect(first).not.toMatch(/^HTTP\/1\.1 429 /m);
      const second = await curl(k);
      expect(second).toMatch(/^HTTP\/1\.1 429 /m);
      expect(second).toMatch(/^retry-after: [1-9]\d*\r?$/im);
      expect(second).not.toMatch(/^HTTP\/1\.1 200 /m);
    });
  });

  describe('the NestJS module (nest-module.ts)', () => {
    let app: INestApplication;
    let base: string;

    beforeAll(async () => {
      // The example's module as it is, only pointed at this test's subject prefix.
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
        .overrideProvider(RATE_LIMIT_MODULE_OPTIONS)
        .useValue({ servers: NATS_URL, subjectPrefix: prefix, failurePolicy: 'closed' })
        .compile();
      app = moduleRef.createNestApplication({ logger: false });
      await app.listen(0, '127.0.0.1');
      base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    });

    afterAll(async () => {
      await app?.close();
    });

    const get = async (path: string, apiKey?: string) => {
      const headers: Record<string, string> = apiKey === undefined ? {} : { 'x-api-key': apiKey };
      const res = await fetch(`${base}${path}`, { headers });
      return [res.status, res.headers.get('RateLimit-Remaining')];
    };

    it('@RateLimit: 200, 200, then 429 for one x-api-key, with RateLimit-* headers', async () => {
      const k = key();
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await get('/items/7', k));
      expect(answers).toEqual([
        [200, '1'],
        [200, '0'],
        [429, '0'],
      ]);
    });

    it('@SkipRateLimit: never limited; no key: 400', async () => {
      const k = key();
      const skipped = [];
      for (let i = 0; i < 3; i++) skipped.push(await get('/items', k));
      expect(skipped).toEqual([
        [200, null],
        [200, null],
        [200, null],
      ]);
      expect((await get('/items/7'))[0]).toBe(400);
    });
  });
});
