import fc from 'fast-check';
import {
  compileQuota,
  Engine,
  PendingAcquire,
  type AlgorithmName,
  type Decision,
  type EngineSnapshot,
  type QuotaSpec,
} from './index';
import { brokenBound, limitArb } from './limit-arbitraries.test-util';

// Properties of the engine when the clock steps back (issue 25 point 7), on a virtual clock.
const T0 = 1_800_000_000_000;
const HOUR = 3_600_000;

/** Limits on both sides of a log's 64: sliding limits keep a log or sub-buckets. */
const sizes = fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 65, max: 90 }));

function quotaArb(algorithm?: AlgorithmName): fc.Arbitrary<QuotaSpec> {
  return fc
    .record({
      requests: limitArb('rps', 'requests', algorithm, sizes),
      tokens: fc.option(limitArb('tps', 'tokens', algorithm, sizes), { nil: undefined }),
    })
    .map(({ requests, tokens }) => ({
      name: 'q',
      limits: tokens === undefined ? [requests] : [requests, tokens],
    }));
}

/** Mostly forward, sometimes a step back (a few ms to seconds), sometimes an hour ahead and back. */
const clockDtArb = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 40 }), weight: 4 },
  { arbitrary: fc.integer({ min: 0, max: 1600 }), weight: 2 },
  { arbitrary: fc.integer({ min: -3000, max: -1 }), weight: 2 },
  { arbitrary: fc.constantFrom(HOUR, -HOUR), weight: 1 },
);

const costArb = fc.record({
  requests: fc.integer({ min: 0, max: 5 }),
  tokens: fc.integer({ min: 0, max: 5 }),
});

/** The longest a refusal of `cost` may last on `limit` with no usage recorded. */
function longestRefusal(spec: QuotaSpec, name: string, cost: number): number {
  const l = compileQuota(spec).limits.find((x) => x.name === name);
  if (l === undefined) return 0;
  switch (l.algorithm) {
    case 'fixed_window':
      return l.windowMs;
    case 'sliding_window':
      return l.logSize > 0 ? l.windowMs : l.ringSize * l.bucketMs;
    case 'token_bucket':
      return Math.ceil((cost * l.windowMs) / l.limit);
  }
}

describe('Engine properties on a clock that steps back', () => {
  it('retryAfterMs is exact (refused at t + r - 1, admitted at t + r) and locks one window at most', () => {
    let refused = 0;
    let runs = 0;
    fc.assert(
      fc.property(
        quotaArb(),
        fc.array(fc.record({ dt: clockDtArb, cost: costArb }), { maxLength: 20, size: 'max' }),
        fc.record({
          requests: fc.integer({ min: 1, max: 4 }),
          tokens: fc.integer({ min: 0, max: 4 }),
        }),
        (quota, history, probe) => {
          runs++;
          const replay = (): [Engine, number, Decision | PendingAcquire] => {
            const engine = new Engine([quota], { shards: 1 });
            let now = T0 + HOUR;
            for (const h of history) {
              now += h.dt;
              engine.acquire({ key: 'k', quota: 'q', cost: h.cost }, now);
            }
            return [engine, now, engine.acquire({ key: 'k', quota: 'q', cost: probe }, now)];
          };
          const [, t, first] = replay();
          if (first instanceof PendingAcquire || first.code !== 'RATE_LIMITED') return;
          refused++;
          const r = first.retryAfterMs;
          const name = first.limitName;
          const cost = name === 'rps' ? probe.requests : probe.tokens;
          expect(r).toBeGreaterThanOrEqual(1);
          expect(r).toBeLessThanOrEqual(longestRefusal(quota, name, cost));
          const [early] = replay();
          expect(early.acquire({ key: 'k', quota: 'q', cost: probe }, t + r - 1)).toMatchObject({
            allowed: false,
          });
          const [onTime] = replay();
          expect(onTime.acquire({ key: 'k', quota: 'q', cost: probe }, t + r)).toMatchObject({
            allowed: true,
          });
        },
      ),
      { numRuns: 1500 },
    );
    expect(refused / runs).toBeGreaterThan(0.2);
  });

  it.each<AlgorithmName>(['sliding_window', 'token_bucket'])(
    '%s never admits more than its bound in real time when the clock only steps back',
    (algorithm) => {
      fc.assert(
        fc.property(
          quotaArb(algorithm),
          fc.array(
            fc.record({
              dt: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 1600 })),
              back: fc.oneof(
                { arbitrary: fc.constant(0), weight: 4 },
                { arbitrary: fc.integer({ min: 1, max: 3000 }), weight: 1 },
              ),
              cost: costArb,
            }),
            { maxLength: 40, size: 'max' },
          ),
          (quota, ops) => {
            const engine = new Engine([quota], { shards: 1 });
            let real = T0;
            let behind = 0; // how far the clock reads behind real time: it only grows
            const admitted: { at: number; requests: number; tokens: number }[] = [];
            for (const op of ops) {
              real += op.dt;
              behind += op.back;
              const d = engine.acquire({ key: 'k', quota: 'q', cost: op.cost }, real - behind);
              if (!(d instanceof PendingAcquire) && d.allowed)
                admitted.push({ at: real, ...op.cost });
            }
            for (const limit of quota.limits) {
              const unit = limit.unit as 'requests' | 'tokens';
              const list = admitted.map((a) => ({ at: a.at, cost: a[unit] }));
              expect(brokenBound(limit, list, T0)).toBeUndefined();
            }
          },
        ),
        { numRuns: 1000 },
      );
    },
  );

  it('every row it keeps reads back as a row it could have written (no unreadable row)', () => {
    fc.assert(
      fc.property(
        quotaArb(),
        quotaArb(),
        fc.array(
          fc.record({
            dt: clockDtArb,
            op: fc.constantFrom('acquire', 'acquire', 'usage', 'release', 'advance', 'change'),
            key: fc.integer({ min: 0, max: 2 }),
            cost: fc.record({
              requests: fc.integer({ min: 0, max: 5 }),
              tokens: fc.integer({ min: 0, max: 50 }),
            }),
          }),
          { maxLength: 40, size: 'max' },
        ),
        (quota, other, ops) => {
          const specs = [quota, { ...other, name: 'q' }];
          const engine = new Engine([quota], { shards: 2 });
          const ids: string[] = [];
          let now = T0 + HOUR;
          let version = 0;
          for (const op of ops) {
            now += op.dt;
            const key = `k${op.key}`;
            switch (op.op) {
              case 'acquire': {
                const d = engine.acquire({ key, quota: 'q', cost: op.cost }, now);
                if (!(d instanceof PendingAcquire) && d.allowed) ids.push(d.requestId);
                break;
              }
              case 'usage':
                engine.usage({ key, quota: 'q', cost: op.cost, requestId: ids.at(-1) }, now);
                break;
              case 'release':
                engine.release({ key, quota: 'q', requestId: ids.pop() }, now);
                break;
              case 'advance':
                engine.advance(now);
                break;
              case 'change':
                engine.setQuotas([specs[++version % 2]!], now);
                break;
            }
          }
          const snapshot = JSON.parse(JSON.stringify(engine.snapshot(now))) as EngineSnapshot;
          const restored = new Engine([specs[version % 2]!], { shards: 2 });
          expect(restored.restore(snapshot, now)).toBe(0);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
