import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLimiter, type LimiterProcess } from './support/limiter-process';

jest.setTimeout(60_000);

const CONFIG = `quotas:
  - name: metered
    limits:
      - { name: rph, limit: 3, window: 1h, algorithm: sliding_window }
  - name: queued
    limits:
      - { name: rph, limit: 1, window: 1h, algorithm: sliding_window }
    queue: { maxSize: 1, maxWaitMs: 60000 }
`;

/** `name{labels} value` lines of the Prometheus text format, by series. */
function seriesOf(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}

describe('limiter GET /metrics', () => {
  let dir: string;
  let limiter: LimiterProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'limiter-ops-metrics-'));
    writeFileSync(join(dir, 'limits.yaml'), CONFIG);
    limiter = await startLimiter({
      NATS_URL: '',
      DATA_DIR: join(dir, 'data'),
      CONFIG_FILE: join(dir, 'limits.yaml'),
    });
  });

  afterAll(async () => {
    await limiter?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const acquire = (body: unknown) =>
    fetch(`${limiter.url}/v1/acquire`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const scrape = async () => {
    const res = await fetch(`${limiter.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return seriesOf(await res.text());
  };

  it('counts decisions by quota and code, times them, and gauges queues and keys', async () => {
    for (let i = 0; i < 5; i++) await (await acquire({ key: 'a', quota: 'metered' })).text();
    await (await acquire({ key: 'b', quota: 'metered' })).text();
    await (await acquire({ key: 'a', quota: 'no-such-quota' })).text();
    await (await acquire({ key: 'q', quota: 'queued' })).text();
    // Waits: the hour's one request is taken. SIGTERM answers it at the end of the test.
    const waiter = acquire({ key: 'q', quota: 'queued', wait: true });
    const deadline = Date.now() + 10_000;
    while ((await scrape()).get('ratelimit_queue_depth{quota="queued"}') !== 1) {
      if (Date.now() > deadline) throw new Error('the waiter was not queued within 10 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    const full = await acquire({ key: 'q', quota: 'queued', wait: true });
    expect(((await full.json()) as { code: string }).code).toBe('QUEUE_FULL');

    const m = await scrape();
    expect(m.get('ratelimit_decisions_total{quota="metered",code="OK"}')).toBe(4);
    expect(m.get('ratelimit_decisions_total{quota="metered",code="RATE_LIMITED"}')).toBe(2);
    expect(m.get('ratelimit_decisions_total{quota="(unknown)",code="UNKNOWN_QUOTA"}')).toBe(1);
    expect(m.get('ratelimit_decisions_total{quota="queued",code="OK"}')).toBe(1);
    expect(m.get('ratelimit_decisions_total{quota="queued",code="QUEUE_FULL"}')).toBe(1);
    expect(m.has('ratelimit_decisions_total{quota="no-such-quota",code="UNKNOWN_QUOTA"}')).toBe(
      false,
    );

    expect(m.get('ratelimit_decision_duration_seconds_count{quota="metered"}')).toBe(6);
    expect(m.get('ratelimit_decision_duration_seconds_bucket{le="+Inf",quota="metered"}')).toBe(6);
    expect(m.has('ratelimit_decision_duration_seconds_bucket{le="0.0001",quota="metered"}')).toBe(
      true,
    );
    expect(m.get('ratelimit_decision_duration_seconds_sum{quota="metered"}')).toBeGreaterThan(0);

    expect(m.get('ratelimit_queue_depth{quota="queued"}')).toBe(1);
    expect(m.get('ratelimit_queue_depth{quota="metered"}')).toBe(0);
    expect(m.get('ratelimit_active_keys{quota="metered"}')).toBe(2);
    expect(m.get('ratelimit_active_keys{quota="queued"}')).toBe(1);
    expect(m.get('ratelimit_active_keys{quota="default"}')).toBe(0);
    expect(m.get('ratelimit_quotas')).toBe(3);
    expect(m.get('ratelimit_config_reloads_total{result="applied"}')).toBe(1);
    expect(m.get('ratelimit_config_valid')).toBe(1);

    // Default process metrics.
    expect(m.has('process_cpu_user_seconds_total')).toBe(true);
    expect(m.has('process_resident_memory_bytes')).toBe(true);
    expect(m.has('nodejs_eventloop_lag_seconds')).toBe(true);

    // SIGTERM answers the waiter before the process exits 0; the answer is counted.
    expect(await limiter.stop('SIGTERM')).toBe(0);
    const answered = (await (await waiter).json()) as { code: string };
    expect(answered.code).toBe('UNAVAILABLE');
  });
});
