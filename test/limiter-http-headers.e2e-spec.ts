/**
 * RATELIMIT_HEADERS on a real limiter (in-process app, no NATS): each mode sends exactly its
 * rate-limit headers on `/v1/acquire` and GoCC's `/rate/:key`, admitted and refused; unset, the
 * headers are today's, unchanged. The quota has two limits, the binding one second, so the draft's
 * fields must describe the limit the decision names, with that limit's window.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFile } from './support/limiter-http';
import { startInProcessLimiter, type RunningApp } from './support/in-process-limiter';
import { runAppToExit } from './support/limiter-process';
import { awayFromWindowEnd } from './support/window';

const HOUR = 3_600_000;

jest.setTimeout(30_000);

const QUOTA = {
  name: 'headers',
  match: 'headers-*',
  limits: [
    { name: 'per-2h', unit: 'requests', limit: 100, window: '2h', algorithm: 'fixed_window' },
    { name: 'per-hour', unit: 'requests', limit: 2, window: '1h', algorithm: 'fixed_window' },
  ],
};

/** Headers every answer carries whatever the mode: not the subject of this file. */
const GENERAL = new Set([
  'connection',
  'content-length',
  'content-type',
  'date',
  'keep-alive',
  'transfer-encoding',
  'x-correlation-id',
]);

const LEGACY = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];
const LEGACY_REFUSED = ['retry-after', 'x-ratelimit-retry-after'];
const DRAFT = ['ratelimit-policy', 'ratelimit'];

type Mode = 'unset' | 'legacy' | 'both' | 'draft';

/** The rate-limit headers each mode sends: admitted, and refused. */
const EXPECTED: Record<Mode, { admitted: string[]; refused: string[] }> = {
  unset: { admitted: LEGACY, refused: [...LEGACY, ...LEGACY_REFUSED] },
  legacy: { admitted: LEGACY, refused: [...LEGACY, ...LEGACY_REFUSED] },
  both: { admitted: [...LEGACY, ...DRAFT], refused: [...LEGACY, ...DRAFT, ...LEGACY_REFUSED] },
  draft: { admitted: DRAFT, refused: [...DRAFT, 'retry-after'] },
};

function rateLimitHeaderNames(res: Response): string[] {
  return [...res.headers.keys()].filter((name) => !GENERAL.has(name)).sort();
}

/** What the answers say, checked against the mode; `remaining` as the binding limit has it. */
function checkHeaders(mode: Mode, res: Response, allowed: boolean, remaining: number): void {
  const expected = EXPECTED[mode][allowed ? 'admitted' : 'refused'];
  expect(rateLimitHeaderNames(res)).toEqual([...expected].sort());
  const h = res.headers;
  if (mode !== 'draft') {
    expect(h.get('ratelimit-limit')).toBe('2');
    expect(h.get('x-ratelimit-limit')).toBe('2');
    expect(h.get('ratelimit-remaining')).toBe(String(remaining));
    expect(h.get('x-ratelimit-remaining')).toBe(String(remaining));
    expect(h.get('ratelimit-reset')).toMatch(/^[0-9]+$/);
  }
  if (mode === 'both' || mode === 'draft') {
    expect(h.get('ratelimit-policy')).toBe('"per-hour";q=2;w=3600');
    const item = /^"per-hour";r=([0-9]+);t=([0-9]+)$/.exec(h.get('ratelimit') ?? '');
    expect(item).not.toBeNull();
    expect(Number(item![1])).toBe(remaining);
    const t = Number(item![2]);
    expect(t).toBeGreaterThan(0);
    expect(t).toBeLessThanOrEqual(3600);
    if (mode === 'both') expect(String(t)).toBe(h.get('ratelimit-reset'));
  }
  if (!allowed) expect(Number(h.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

const dataDir = mkdtempSync(join(tmpdir(), 'limiter-http-headers-'));

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe.each<Mode>(['unset', 'legacy', 'both', 'draft'])('RATELIMIT_HEADERS %s', (mode) => {
  let limiter: RunningApp;

  beforeAll(async () => {
    // Both limits count per window on the clock: stay clear of the hour's end.
    await awayFromWindowEnd(HOUR, 10_000);
    limiter = await startInProcessLimiter(dataDir, {
      CONFIG_FILE: configFile(dataDir, [QUOTA]),
      ...(mode === 'unset' ? {} : { RATELIMIT_HEADERS: mode }),
    });
  });
  afterAll(async () => {
    await limiter?.app.close();
  });

  it('on /v1/acquire, admitted and refused', async () => {
    const key = `headers-${randomUUID()}`;
    const acquire = (): Promise<Response> =>
      fetch(`${limiter.url}/v1/acquire`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key, quota: 'headers' }),
      });
    for (const remaining of [1, 0]) {
      const res = await acquire();
      expect(res.status).toBe(200);
      checkHeaders(mode, res, true, remaining);
    }
    const refused = await acquire();
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { limitName: string }).limitName).toBe('per-hour');
    checkHeaders(mode, refused, false, 0);
  });

  it('on GoCC /rate/:key, admitted and refused', async () => {
    const url = `${limiter.url}/rate/headers-${randomUUID()}`;
    for (const remaining of [1, 0]) {
      const res = await fetch(url, { method: 'POST' });
      expect(res.status).toBe(200);
      checkHeaders(mode, res, true, remaining);
    }
    const refused = await fetch(url, { method: 'POST' });
    expect(refused.status).toBe(429);
    checkHeaders(mode, refused, false, 0);
  });

  it('sends none on a request no limit decided', async () => {
    const res = await fetch(`${limiter.url}/v1/acquire`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'k', quota: 'no-such-quota' }),
    });
    expect(res.status).toBe(404);
    expect(rateLimitHeaderNames(res)).toEqual([]);
  });
});

it('refuses to start with a RATELIMIT_HEADERS it does not know, naming it', async () => {
  const { code, output } = await runAppToExit('limiter', {
    RATELIMIT_HEADERS: 'rfc',
    NATS_URL: '',
    PORT: '0',
    DATA_DIR: dataDir,
  });
  expect(code).not.toBe(0);
  expect(output).toContain('RATELIMIT_HEADERS must be one of legacy, both, draft, got \\"rfc\\"');
});
