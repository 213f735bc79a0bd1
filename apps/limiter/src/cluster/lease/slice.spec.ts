import type { NormalisedAcquire } from '@app/contracts';
import { compileQuota, type QuotaSpec } from '@app/engine';
import type { ClusterQuotaEntry } from '../cluster-decision';
import type { LeaseGrant } from '../redis-quota-store';
import { Slice } from './slice';

const spec: QuotaSpec = {
  name: 'q',
  scope: 'cluster',
  limits: [
    { name: 'rpm', unit: 'requests', limit: 10_000, windowMs: 60_000, algorithm: 'fixed_window' },
    { name: 'tpm', unit: 'tokens', limit: 1_000_000, windowMs: 60_000, algorithm: 'fixed_window' },
  ],
};
const q: ClusterQuotaEntry = {
  name: 'q',
  limits: compileQuota(spec).limits,
  concurrency: undefined,
  spec,
  leasable: true,
};
const req = (requests: number, tokens: number): NormalisedAcquire => ({
  key: 'k',
  quota: 'q',
  cost: { requests, tokens },
});
/** Redis's clock: unrelated to the process's. */
const R = 1_700_000_000_000;
const T0 = 5_000;
/** A grant charged at Redis's R with until_i = R + spans_i. */
const grant = (granted: number[], spans: number[], seq = 9): LeaseGrant => ({
  outcome: {
    allowed: true,
    code: 'OK',
    now: R,
    retryAfterMs: 0,
    refusing: -1,
    seq,
    replayed: false,
    inFlight: 0,
    approved: 0,
    denied: 0,
    limits: granted.map(() => ({ used: 0, resetMs: 60_000 })),
  },
  granted,
  until: spans.map((s) => R + s),
  notes: [],
});

describe('Slice: spend deadline on the local clock', () => {
  // until - now = 100 asked at local T0: spendable through T0+98 (deadline T0+99, strictly before).
  it.each([
    [[100, 100], 0, true],
    [[100, 100], 50, true],
    [[100, 100], 98, true],
    [[100, 100], 99, false],
    [[100, 100], 100, false],
    [[100, 100], 500, false],
    // The nearest until of all limits bounds the slice.
    [[100, 40], 38, true],
    [[100, 40], 39, false],
    [[7, 100], 5, true],
    [[7, 100], 6, false],
    [[1, 100], 0, false],
  ])('until - now = %j: at T0+%p spendable %p', (spans, dt, expected) => {
    const slice = new Slice(q, 'k', T0);
    slice.granted(grant([10, 1000], spans), T0, 100);
    expect(slice.covers(req(1, 1), T0 + dt)).toBe(expected);
    expect(slice.spend(req(1, 1), T0 + dt)).toBe(expected);
  });

  it('counts from when it was asked, not when the grant arrived', () => {
    const slice = new Slice(q, 'k', T0);
    slice.granted(grant([10, 1000], [100, 100]), T0 - 30, 100);
    expect(slice.spend(req(1, 1), T0 + 68)).toBe(true);
    expect(slice.spend(req(1, 1), T0 + 69)).toBe(false);
  });

  it('a fresh slice and a cleared one spend nothing', () => {
    const slice = new Slice(q, 'k', T0);
    expect(slice.covers(req(0, 0), T0)).toBe(false);
    slice.granted(grant([10, 1000], [100, 100]), T0, 100);
    slice.clear();
    expect(slice.spend(req(1, 1), T0)).toBe(false);
    expect(slice.seq).toBe(0);
  });
});

describe('Slice: all or nothing across limits', () => {
  // [cost requests, cost tokens, admitted, left after]
  const steps: [number, number, boolean, number[]][] = [
    [1, 100, true, [2, 150]],
    [1, 100, true, [1, 50]],
    [1, 100, false, [1, 50]], // tokens short: requests untouched
    [2, 10, false, [1, 50]], // requests short: tokens untouched
    [1, 50, true, [0, 0]],
    [0, 0, true, [0, 0]],
    [1, 0, false, [0, 0]],
  ];
  it('spends a request from every limit or from none', () => {
    const slice = new Slice(q, 'k', T0);
    slice.granted(grant([3, 250], [100, 100]), T0, 100);
    for (const [requests, tokens, admitted, left] of steps) {
      expect([requests, tokens, slice.spend(req(requests, tokens), T0 + 1)]).toEqual([
        requests,
        tokens,
        admitted,
      ]);
      expect(slice.left).toEqual(left);
    }
  });
});

describe('Slice: replies', () => {
  it('answers whole milliseconds, rounded up, on a monotonic clock with fractions', () => {
    const slice = new Slice(q, 'k', T0);
    slice.granted(grant([5, 500], [100, 100]), T0 + 0.25, 100);
    slice.spend(req(1, 1), T0 + 10.6);
    const admitted = slice.admitted(req(1, 1), 'r1-l0', T0 + 10.6);
    expect(admitted.resetMs).toBe(60_000 - 10);

    const refusing = new Slice(q, 'k', T0);
    const g = grant([0, 0], [0, 0]);
    const outcome = { ...g.outcome, allowed: false, code: 'RATE_LIMITED' as const };
    refusing.granted({ ...g, outcome: { ...outcome, retryAfterMs: 700, refusing: 0 } }, T0, 100);
    const refused = refusing.refused(req(1, 1), 'id', T0 + 40.4);
    expect(refused.retryAfterMs).toBe(660);
    expect(refused.resetMs).toBe(660);
  });

  it('an admission reports the tighter limit: Redis remaining after the grant plus left', () => {
    const slice = new Slice(q, 'k', T0);
    const g = grant([5, 500], [100, 100]);
    slice.granted(
      {
        ...g,
        outcome: {
          ...g.outcome,
          limits: [
            { used: 9_000, resetMs: 20_000 },
            { used: 0, resetMs: 30_000 },
          ],
        },
      },
      T0,
      100,
    );
    slice.spend(req(1, 1), T0 + 10);
    const d = slice.admitted(req(1, 1), 'r1-l0', T0 + 10);
    expect(d).toMatchObject({ allowed: true, code: 'OK', requestId: 'r1-l0', limitName: 'rpm' });
    expect(d.remaining).toBe(1_000 + 4);
    expect(d.resetMs).toBe(20_000 - 10);
  });

  it('a refusal holds min(retryAfter, horizon) from the ask and answers with Redis retryAfter', () => {
    const slice = new Slice(q, 'k', T0);
    const g = grant([0, 0], [0, 0]);
    slice.granted(
      {
        ...g,
        outcome: {
          ...g.outcome,
          allowed: false,
          code: 'RATE_LIMITED',
          retryAfterMs: 700,
          refusing: 1,
          seq: 0,
        },
      },
      T0,
      100,
    );
    expect(slice.refusedUntil).toBe(T0 + 100);
    const d = slice.refused(req(1, 1), 'id', T0 + 40);
    expect(d).toMatchObject({ allowed: false, code: 'RATE_LIMITED', limitName: 'tpm' });
    expect(d.retryAfterMs).toBe(660);
  });
});
