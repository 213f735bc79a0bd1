import {
  MAX_TOP_REFUSED_KEY_LENGTH,
  SpaceSaving,
  TOP_REFUSED_K,
  type RefusedKey,
} from '@app/contracts';

/**
 * Quotas whose refused keys are counted at once: a report period with refusals in more quotas
 * counts the first ones only. With at most TOP_REFUSED_K keys of at most 256 characters each,
 * what they add to a report stays under 300 KB, well within MAX_STATS_REPORT_BYTES.
 */
export const MAX_REFUSING_QUOTAS = 100;

/**
 * Per quota, the keys refused most since the last `take()` (each stats report takes them): a
 * space-saving top-k each, so memory stays at most MAX_REFUSING_QUOTAS x TOP_REFUSED_K keys,
 * and counts reset each period: a report says who is being limited now.
 * `refused` is on the decision path: a map lookup and a counter, O(k) for a new key once full.
 */
export class RefusedKeys {
  private readonly byQuota = new Map<string, SpaceSaving>();
  /** Counters of quotas that refused nothing in the last period, reused rather than reallocated. */
  private readonly spare: SpaceSaving[] = [];

  constructor(
    private readonly maxQuotas = MAX_REFUSING_QUOTAS,
    private readonly k = TOP_REFUSED_K,
  ) {}

  refused(quota: string, key: string): void {
    // The contract's keys fit; a longer one (none should come) would spoil the whole report.
    if (key.length > MAX_TOP_REFUSED_KEY_LENGTH) return;
    let top = this.byQuota.get(quota);
    if (top === undefined) {
      if (this.byQuota.size >= this.maxQuotas) return;
      top = this.spare.pop() ?? new SpaceSaving(this.k);
      this.byQuota.set(quota, top);
    }
    top.offer(key);
  }

  /** The period's top keys per quota, most refused first; starts the next period. */
  take(): Map<string, RefusedKey[]> {
    const taken = new Map<string, RefusedKey[]>();
    for (const [quota, top] of this.byQuota) {
      taken.set(quota, top.top());
      top.reset();
      if (this.spare.length < this.maxQuotas) this.spare.push(top);
    }
    this.byQuota.clear();
    return taken;
  }
}
