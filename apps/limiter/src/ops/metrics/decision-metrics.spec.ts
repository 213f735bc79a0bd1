import { Registry } from 'prom-client';
import { DecisionMetrics, MAX_QUOTA_LABELS } from './decision-metrics';

function setup() {
  const metrics = new DecisionMetrics([0.001, 1]);
  const registry = new Registry();
  const decisions = metrics.counter('d_total', 'd');
  const latency = metrics.histogram('l_seconds', 'l');
  registry.registerMetric(decisions as never);
  registry.registerMetric(latency as never);
  return { metrics, decisions, latency, registry };
}

async function countsOf(
  counter: ReturnType<DecisionMetrics['counter']>,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await counter.get()).values) out[`${v.labels.quota}/${v.labels.code}`] = v.value;
  return out;
}

describe('DecisionMetrics', () => {
  it('counts by quota and code and observes latency per quota', async () => {
    const { metrics, decisions, registry } = setup();
    metrics.decided('api', 'OK', 0.0002);
    metrics.decided('api', 'OK', 0.0003);
    metrics.decided('api', 'RATE_LIMITED', 2);
    metrics.decided('llm', 'OK', 0.0001);

    expect(await countsOf(decisions)).toEqual({ 'api/OK': 2, 'api/RATE_LIMITED': 1, 'llm/OK': 1 });
    const text = await registry.metrics();
    expect(text).toContain('# TYPE l_seconds histogram');
    expect(text).toContain('l_seconds_bucket{le="0.001",quota="api"} 2');
    expect(text).toContain('l_seconds_bucket{le="1",quota="api"} 2');
    expect(text).toContain('l_seconds_bucket{le="+Inf",quota="api"} 3');
    expect(text).toContain('l_seconds_count{quota="api"} 3');
    expect(text).toContain('l_seconds_sum{quota="api"} 2.0005');
    expect(text).toContain('d_total{quota="llm",code="OK"} 1');
  });

  it('labels every unknown quota alike, so clients cannot mint series', async () => {
    const { metrics, decisions } = setup();
    for (let i = 0; i < 10; i++) metrics.decided(`made-up-${i}`, 'UNKNOWN_QUOTA', 0.0001);
    expect(await countsOf(decisions)).toEqual({ '(unknown)/UNKNOWN_QUOTA': 10 });
  });

  it('folds quotas beyond the label cap into one series', async () => {
    const { metrics, decisions } = setup();
    for (let i = 0; i < MAX_QUOTA_LABELS + 5; i++) metrics.decided(`q${i}`, 'OK', 0.0001);
    const counts = await countsOf(decisions);
    expect(Object.keys(counts)).toHaveLength(MAX_QUOTA_LABELS + 1);
    expect(counts['(other)/OK']).toBe(5);
    expect(counts['q0/OK']).toBe(1);
  });
});
