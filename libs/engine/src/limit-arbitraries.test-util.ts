import fc from 'fast-check';
import type { AlgorithmName, LimitSpec } from './index';

// Generators of limits shared by the engine's property tests, and the bound each limit keeps.

export const algorithmArb = fc.constantFrom<AlgorithmName>(
  'fixed_window',
  'sliding_window',
  'token_bucket',
);

/** A limit of small numbers; `limits` widens its size (a sliding limit above 64 keeps sub-buckets). */
export function limitArb(
  name: string,
  unit: string,
  algorithm?: AlgorithmName,
  limits: fc.Arbitrary<number> = fc.integer({ min: 1, max: 8 }),
): fc.Arbitrary<LimitSpec> {
  return fc
    .record({
      algorithm: algorithm === undefined ? algorithmArb : fc.constant(algorithm),
      limit: limits,
      windowMs: fc.constantFrom(7, 100, 250, 1000, 1500),
      burst: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
      precision: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
    })
    .map(({ algorithm, limit, windowMs, burst, precision }) => ({
      name,
      unit,
      limit,
      windowMs,
      algorithm,
      ...(algorithm === 'token_bucket' && burst !== undefined ? { burst } : {}),
      ...(algorithm === 'sliding_window' && precision !== undefined ? { precision } : {}),
    }));
}

/**
 * The first way admissions (instants and costs, of one key) break `limit`'s bound, or undefined:
 * a fixed window's per window, a sliding window's in any interval of windowMs, a token bucket's
 * burst + rate x time in any span. Instants are shown from `t0`.
 */
export function brokenBound(
  limit: LimitSpec,
  admissions: readonly { at: number; cost: number }[],
  t0: number,
): string | undefined {
  const list = admissions.filter((a) => a.cost > 0);
  const w = limit.windowMs;
  switch (limit.algorithm) {
    case 'fixed_window': {
      const perWindow = new Map<number, number>();
      for (const a of list) {
        const start = a.at - (a.at % w);
        const sum = (perWindow.get(start) ?? 0) + a.cost;
        perWindow.set(start, sum);
        if (sum > limit.limit) return `window at ${start - t0}: ${sum} > ${limit.limit}`;
      }
      return undefined;
    }
    case 'sliding_window':
      for (const { at } of list) {
        const sum = list.filter((b) => b.at > at - w && b.at <= at).reduce((n, b) => n + b.cost, 0);
        if (sum > limit.limit) return `(${at - w - t0}, ${at - t0}]: ${sum} > ${limit.limit}`;
      }
      return undefined;
    case 'token_bucket': {
      const burst = limit.burst ?? limit.limit;
      for (const { at: a } of list) {
        for (const { at: b } of list) {
          if (b < a) continue;
          const sum = list.filter((x) => x.at >= a && x.at <= b).reduce((n, x) => n + x.cost, 0);
          // sum <= burst + limit * (b - a) / windowMs, in integers.
          if (sum * w > burst * w + limit.limit * (b - a)) return `[${a - t0}, ${b - t0}]: ${sum}`;
        }
      }
      return undefined;
    }
  }
}
