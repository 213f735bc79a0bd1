/**
 * docs/migrating.md stays true: its marked blocks are the files under examples/migrating/ (and
 * every such file is shown), a limiter started with GoCC's environment file as it is answers
 * GoCC's calls as the page says, and go-ratelimit's file imports as the page says.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GOCC_DEFAULTS } from '@app/contracts';
import { parseImport } from '../apps/admin/src/import/parse-import';
import { docBlocks, readRepoFile, repoRoot } from './support/doc-blocks';
import { startLimiter, type LimiterProcess } from './support/limiter-process';

jest.setTimeout(120_000);

const PAGE = 'docs/migrating.md';
const EXAMPLES = 'examples/migrating';

/** `NAME=value` lines of an env file, comments and blank lines left out. */
function envFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (match !== null) env[match[1]!] = match[2]!;
  }
  return env;
}

describe('docs/migrating.md shows the examples as they are', () => {
  const blocks = docBlocks(PAGE);

  it('every marked block equals the file it names', () => {
    const marked = blocks.filter((b) => b.file !== undefined);
    expect(marked.length).toBeGreaterThan(0);
    for (const block of marked) {
      expect({ file: block.file, kind: block.kind, text: block.text }).toEqual({
        file: block.file,
        kind: 'copy',
        text: readRepoFile(block.file!),
      });
    }
  });

  it(`shows every file of ${EXAMPLES}/`, () => {
    const shown = new Set(blocks.map((b) => b.file));
    const files = readdirSync(join(repoRoot, EXAMPLES)).map((f) => `${EXAMPLES}/${f}`);
    expect(files.filter((f) => !shown.has(f))).toEqual([]);
  });
});

describe("a limiter started with GoCC's environment", () => {
  let limiter: LimiterProcess;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'migrating-'));
    const gocc = envFile(readRepoFile(`${EXAMPLES}/gocc.env`));
    // Its own port and state; no NATS, as GoCC runs alone. INSTANCE_URLS set, as a distributed
    // GoCC deployment sets it.
    delete gocc['PORT'];
    limiter = await startLimiter({
      ...gocc,
      INSTANCE_URLS: 'http://a:8080,http://b:8080',
      NATS_URL: '',
      DATA_DIR: dir,
    });
  });

  afterAll(async () => {
    await limiter?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers GoCC's calls as the page says", async () => {
    const { stdout } = await promisify(execFile)('sh', [`${EXAMPLES}/gocc-calls.sh`], {
      cwd: repoRoot,
      env: { ...process.env, BASE: limiter.url },
    });
    const [released, codes, view, listing, h2c] = stdout.split('\n');
    expect(JSON.parse(released!)).toEqual({ released: true });
    expect(codes!.trim()).toBe('200 200 200 429');
    expect(JSON.parse(view!)).toMatchObject({
      Key: 'partner-api',
      Config: { WindowMillis: 60_000, MaxRequestsPerWindow: 3, MaxRequestsInQueue: 2 },
      // The released request was admitted too: approvals are counted, releases give capacity back.
      NumApprovedThisWindow: 4,
      NumDeniedThisWindow: 1,
      Found: true,
    });
    expect(Object.keys((JSON.parse(listing!) as { Instances: object }).Instances)).toContain(
      'partner-api',
    );
    expect(h2c).toBe('2 200');
  });

  it('serves the default quota from GoCC’s variables', async () => {
    const res = await fetch(`${limiter.url}/debug/anyone`);
    expect(await res.json()).toMatchObject({
      Config: { WindowMillis: 60_000, MaxRequestsPerWindow: 5, MaxRequestsInQueue: 2 },
    });
  });

  it('names the GoCC variables it does not read, and what to use instead', () => {
    expect(limiter.output()).toMatch(/INSTANCE_URLS is GoCC's distributed mode.*scope: cluster/);
    expect(limiter.output()).toMatch(/SERVER_TYPE is not read/);
  });
});

describe("go-ratelimit's ratelimits.yaml, as the page shows it", () => {
  it('imports its quotas, providers and the last minute of its state', () => {
    const now = Date.parse('2026-11-26T10:00:30Z');
    const plan = parseImport(readRepoFile(`${EXAMPLES}/ratelimits.yaml`), 'yaml', {
      gocc: GOCC_DEFAULTS,
      now,
    });
    expect(plan).toMatchObject({
      source: 'go-ratelimit',
      quotas: [expect.objectContaining({ name: 'my-local-llama' })],
      enableProviders: ['anthropic'],
      models: [{ provider: 'anthropic', model: { model: 'claude-sonnet-4', maxRpm: 40 } }],
      usage: [{ quota: 'my-local-llama', cost: { requests: 2, tokens: 1200 } }],
    });
    expect(plan.notes.join('\n')).toMatch(/42 requests in its day/);
  });
});
