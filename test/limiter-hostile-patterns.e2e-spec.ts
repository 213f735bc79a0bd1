import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLimiter, type LimiterProcess } from './support/limiter-process';

/**
 * Match patterns from the config file are decided in linear time. With V8's backtracking RegExp,
 * the keys below held the limiter's event loop for hours (`^(a+)+$`, 4x per 2 more characters
 * from 1.7 s at 29) and for minutes (a glob of 8 stars on 100 characters): a request then got no
 * answer, and neither did `/healthz`. Every request here is bounded, so that defect fails the
 * test instead of hanging it.
 */

jest.setTimeout(90_000);

const ANSWER_WITHIN_MS = 20_000;

const CONFIG = `quotas:
  - name: nested
    match: 're:^(a+)+$'
    limits: [{ name: rps, limit: 5, window: 1s }]
  - name: stars
    match: '*b*b*b*b*b*b*b*b*c'
    limits: [{ name: rps, limit: 5, window: 1s }]
`;

async function decide(limiter: LimiterProcess, key: string): Promise<{ quota: string }> {
  const res = await fetch(`${limiter.url}/v1/decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  });
  return (await res.json()) as { quota: string };
}

describe('limiter: hostile match patterns', () => {
  let dir: string;
  let limiter: LimiterProcess | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'limiter-hostile-patterns-'));
    writeFileSync(join(dir, 'limits.yaml'), CONFIG);
    limiter = await startLimiter({
      CONFIG_FILE: join(dir, 'limits.yaml'),
      DATA_DIR: dir,
      NATS_URL: '',
    });
    const ready = await fetch(`${limiter.url}/readyz`);
    expect(ready.status).toBe(200);
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('accepts the patterns and decides keys that made them backtrack, answering at once', async () => {
    expect(await decide(limiter!, `${'a'.repeat(40)}!`)).toMatchObject({ quota: 'default' });
    expect(await decide(limiter!, 'b'.repeat(100))).toMatchObject({ quota: 'default' });
    expect(await decide(limiter!, 'a'.repeat(40))).toMatchObject({ quota: 'nested' });
    expect(await decide(limiter!, `${'b'.repeat(100)}c`)).toMatchObject({ quota: 'stars' });
    const health = await fetch(`${limiter!.url}/healthz`, {
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    });
    expect(health.status).toBe(200);
  });
});
