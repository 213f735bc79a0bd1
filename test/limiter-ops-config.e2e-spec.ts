import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLimiter, type LimiterProcess } from './support/limiter-process';

jest.setTimeout(60_000);

interface Reply {
  allowed: boolean;
  code: string;
  quota: string;
  limit: number;
  limitName: string;
}

interface Readiness {
  ready: boolean;
  configError?: string;
}

interface KeyStats {
  quota: string;
  limits: { name: string; unit: string; limit: number }[];
}

async function post(limiter: LimiterProcess, path: string, body: unknown): Promise<Reply> {
  const res = await fetch(`${limiter.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Reply;
}

async function readiness(limiter: LimiterProcess): Promise<{ status: number; body: Readiness }> {
  const res = await fetch(`${limiter.url}/readyz`);
  return { status: res.status, body: (await res.json()) as Readiness };
}

/** Polls `probe` every 50 ms until it returns true; fails after `timeoutMs`. */
async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const apiQuota = (limit: number | string): string => `quotas:
  - name: api
    limits:
      - { name: rph, limit: ${limit}, window: 1h }
`;

describe('limiter CONFIG_FILE', () => {
  let dir: string;
  let limiter: LimiterProcess | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'limiter-ops-config-'));
  });

  afterEach(async () => {
    await limiter?.stop('SIGKILL');
    limiter = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (file: string, env: Record<string, string> = {}) => {
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: join(dir, 'data'),
      CONFIG_FILE: file,
      ...env,
    });
    return limiter;
  };

  it('reloads edits in place and by rename; refuses an invalid edit naming its line', async () => {
    const file = join(dir, 'limits.yaml');
    writeFileSync(file, apiQuota(2));
    const l = await start(file);
    const limitOf = async () => (await post(l, '/v1/decide', { key: 'k', quota: 'api' })).limit;
    expect(await limitOf()).toBe(2);
    expect(await readiness(l)).toEqual({
      status: 200,
      body: { ready: true, config: 'loaded', nats: 'disabled', redis: 'disabled' },
    });

    writeFileSync(file, apiQuota(7));
    await eventually('the in-place edit', async () => (await limitOf()) === 7);

    // What editors and ConfigMaps do: write a new file beside it, rename it over the old one.
    writeFileSync(join(dir, 'limits.yaml.tmp'), apiQuota(9));
    renameSync(join(dir, 'limits.yaml.tmp'), file);
    await eventually('the renamed file', async () => (await limitOf()) === 9);

    writeFileSync(file, apiQuota(-3));
    await eventually(
      'the refusal',
      async () => (await readiness(l)).body.configError !== undefined,
    );
    const refused = await readiness(l);
    expect(refused.status).toBe(200); // the last good config is in force
    expect(refused.body.ready).toBe(true);
    expect(refused.body.configError).toContain(`${file}: line 4, quotas[0].limits[0].limit:`);
    expect(l.output()).toContain('line 4, quotas[0].limits[0].limit');
    expect(await limitOf()).toBe(9);

    writeFileSync(file, 'quotas:\n  - name: api\n    limits: [ { name: rph\n');
    await eventually('the syntax error', async () =>
      /line [34]/.test((await readiness(l)).body.configError ?? ''),
    );
    expect(await limitOf()).toBe(9);

    writeFileSync(file, apiQuota(4));
    await eventually('the fixed file', async () => (await limitOf()) === 4);
    expect((await readiness(l)).body.configError).toBeUndefined();
    expect(await l.stop('SIGTERM')).toBe(0);
  });

  /** /healthz, given at most 5 s: a limiter reading a FIFO on its event loop never answered. */
  const healthy = async (l: LimiterProcess): Promise<number> =>
    (await fetch(`${l.url}/healthz`, { signal: AbortSignal.timeout(5_000) })).status;

  it('refuses a FIFO given at start without waiting on it, and loads the file that replaces it', async () => {
    const file = join(dir, 'limits.yaml');
    execFileSync('mkfifo', [file]);
    const l = await start(file);
    expect(await healthy(l)).toBe(200);
    const { status, body } = await readiness(l);
    expect(status).toBe(503);
    expect(body.configError).toBe(
      `CONFIG_FILE ${file}: cannot read: is a FIFO; CONFIG_FILE must be a regular file`,
    );
    expect(l.output()).toContain('is a FIFO');

    writeFileSync(join(dir, 'limits.yaml.tmp'), apiQuota(3));
    renameSync(join(dir, 'limits.yaml.tmp'), file);
    await eventually('ready', async () => (await readiness(l)).status === 200);
    expect((await post(l, '/v1/decide', { key: 'k', quota: 'api' })).limit).toBe(3);
  });

  it('refuses a FIFO or a device put in place of the file, answering /healthz all along', async () => {
    const file = join(dir, 'limits.yaml');
    const replace = (make: (tmp: string) => void) => {
      const tmp = join(dir, 'limits.yaml.tmp');
      make(tmp);
      renameSync(tmp, file);
    };
    writeFileSync(file, apiQuota(2));
    const l = await start(file);
    const limitOf = async () => (await post(l, '/v1/decide', { key: 'k', quota: 'api' })).limit;
    expect(await limitOf()).toBe(2);

    for (const [make, kind] of [
      [(tmp: string) => execFileSync('mkfifo', [tmp]), 'a FIFO'],
      [(tmp: string) => symlinkSync('/dev/zero', tmp), 'a character device'],
    ] as const) {
      replace(make);
      await eventually(kind, async () =>
        ((await readiness(l)).body.configError ?? '').includes(kind),
      );
      expect(await healthy(l)).toBe(200);
      expect((await readiness(l)).body.configError).toBe(
        `CONFIG_FILE ${file}: cannot read: is ${kind}; CONFIG_FILE must be a regular file`,
      );
      expect(await limitOf()).toBe(2); // the last good config stays in force
    }
    expect(l.output()).toContain('is a character device');

    replace((tmp) => writeFileSync(tmp, apiQuota(6)));
    await eventually('the regular file again', async () => (await limitOf()) === 6);
    expect((await readiness(l)).body.configError).toBeUndefined();
  });

  it('is not ready while the file given at start is invalid, and serves the default quota', async () => {
    const file = join(dir, 'limits.yaml');
    writeFileSync(file, apiQuota('lots'));
    const l = await start(file, { MAX_REQUESTS: '1', WINDOW_MILLIS: '3600000' });
    const { status, body } = await readiness(l);
    expect(status).toBe(503);
    expect(body.ready).toBe(false);
    expect(body.configError).toContain('line 4, quotas[0].limits[0].limit:');
    expect((await post(l, '/v1/acquire', { key: 'k', quota: 'api' })).code).toBe('UNKNOWN_QUOTA');
    expect((await post(l, '/v1/acquire', { key: 'k' })).limit).toBe(1);

    writeFileSync(file, apiQuota(3));
    await eventually('ready', async () => (await readiness(l)).status === 200);
    expect((await post(l, '/v1/acquire', { key: 'k', quota: 'api' })).limit).toBe(3);
  });

  it('accepts a GoCC JSON config file as it is', async () => {
    const file = join(dir, 'gocc.json');
    writeFileSync(
      file,
      JSON.stringify({
        keys: [
          {
            key_pattern: 'alpha',
            key_pattern_is_regex: false,
            max_requests_per_window: 2,
            max_requests_in_queue: 0,
            window_millis: 3_600_000,
          },
          {
            key_pattern: '^user-[0-9]+$',
            key_pattern_is_regex: true,
            max_requests_per_window: 1,
            window_millis: 3_600_000,
          },
        ],
      }),
    );
    const l = await start(file, { MAX_REQUESTS: '3', WINDOW_MILLIS: '3600000' });
    const statuses = async (key: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${l.url}/rate/${key}`, { method: 'POST' });
        await res.text();
        out.push(res.status);
      }
      return out;
    };
    expect(await statuses('alpha', 3)).toEqual([200, 200, 429]);
    expect(await statuses('user-42', 2)).toEqual([200, 429]);
    expect(await statuses('beta', 4)).toEqual([200, 200, 200, 429]); // the default quota
    const debug = (await (await fetch(`${l.url}/debug/alpha`)).json()) as {
      Config: { WindowMillis: number; MaxRequestsPerWindow: number };
    };
    expect(debug.Config).toMatchObject({ WindowMillis: 3_600_000, MaxRequestsPerWindow: 2 });
    expect((await readiness(l)).status).toBe(200);
  });

  it('serves the built-in provider profiles enabled by providers: [...]', async () => {
    const file = join(dir, 'providers.yaml');
    writeFileSync(file, 'providers: [openai, gemini]\n');
    const l = await start(file);
    const stats = async (model: string) =>
      (await (await fetch(`${l.url}/v1/stats/${model}`)).json()) as KeyStats;

    const gpt = await stats('gpt-4o');
    expect(gpt.quota).toBe('gpt-4o');
    // rpd is 0 for gpt-4o: unlimited, so it is skipped and not listed.
    expect(gpt.limits.map(({ name, unit, limit }) => ({ name, unit, limit }))).toEqual([
      { name: 'rpm', unit: 'requests', limit: 500 },
      { name: 'tpm', unit: 'tokens', limit: 30_000 },
    ]);
    expect((await stats('gemini-2.5-pro')).limits.map((x) => [x.name, x.limit])).toEqual([
      ['rpm', 150],
      ['tpm', 1_000_000],
      ['rpd', 1000],
    ]);

    const ok = await post(l, '/v1/acquire', { key: 'gpt-4o', cost: { tokens: 1500 } });
    expect(ok).toMatchObject({ allowed: true, code: 'OK', quota: 'gpt-4o' });
    const tooBig = await post(l, '/v1/acquire', { key: 'gpt-4o', cost: { tokens: 30_001 } });
    expect(tooBig).toMatchObject({ code: 'COST_EXCEEDS_LIMIT', limitName: 'tpm' });
    // anthropic is not enabled: its model names are ordinary keys of the default quota.
    expect((await post(l, '/v1/decide', { key: 'claude-opus-4' })).quota).toBe('default');
    expect((await post(l, '/v1/decide', { key: 'x', quota: 'claude-opus-4' })).code).toBe(
      'UNKNOWN_QUOTA',
    );
  });
});
