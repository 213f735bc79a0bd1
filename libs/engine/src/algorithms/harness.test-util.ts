import { compileQuota } from '../quota/compile';
import type { LimitSpec } from '../types';
import type { CompiledLimit } from './algorithm';

/** One limit and one key's state, driven the way a shard drives it: sync, check, then charge. */
export class LimitProbe {
  readonly limit: CompiledLimit;
  readonly row: Float64Array;

  constructor(spec: Omit<LimitSpec, 'name' | 'unit'>) {
    const limit = compileQuota({ name: 'q', limits: [{ name: 'l', unit: 'requests', ...spec }] })
      .limits[0];
    if (limit === undefined) throw new Error('unlimited limits have no state');
    this.limit = limit;
    this.row = new Float64Array(limit.offset + limit.impl.slots(limit));
  }

  /** Admits `cost` at `now` if it fits; returns 0 when admitted, else retryAfterMs. */
  take(now: number, cost = 1): number {
    const { impl } = this.limit;
    const o = this.limit.offset;
    impl.sync(this.row, o, this.limit, now);
    if (cost > 0 && impl.available(this.row, o, this.limit) < cost) {
      return impl.retryAfter(this.row, o, this.limit, now, cost);
    }
    impl.charge(this.row, o, this.limit, now, cost);
    return 0;
  }

  available(now: number): number {
    this.limit.impl.sync(this.row, this.limit.offset, this.limit, now);
    return this.limit.impl.available(this.row, this.limit.offset, this.limit);
  }

  refund(now: number, chargedAt: number, cost: number): void {
    this.limit.impl.sync(this.row, this.limit.offset, this.limit, now);
    this.limit.impl.refund(this.row, this.limit.offset, this.limit, chargedAt, cost);
  }

  resetMs(now: number): number {
    this.limit.impl.sync(this.row, this.limit.offset, this.limit, now);
    return this.limit.impl.resetMs(this.row, this.limit.offset, this.limit, now);
  }

  idleAt(): number {
    return this.limit.impl.idleAt(this.row, this.limit.offset, this.limit);
  }
}

/** A row of a table test: at `at`, take `cost`; expect admission (0) or this retryAfterMs. */
export type Step = readonly [at: number, cost: number, retryAfterMs: number];

export function run(probe: LimitProbe, steps: readonly Step[]): number[] {
  return steps.map(([at, cost]) => probe.take(at, cost));
}
