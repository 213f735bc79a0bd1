import { Injectable } from '@nestjs/common';
import { StatsAggregator } from '../control';
import { AdminStore } from '../store';
import { toLimit } from './quota-mapping';
import { quotasInForce } from './quotas-in-force';
import { QuotaSource, type QuotaInForce } from './quotas-in-force.types';

/**
 * The quotas in force: the admin's own control set composed as the limiters compose it, plus the
 * quota names the live limiters report that the admin does not know (their config files').
 */
@Injectable()
export class QuotasInForceService {
  constructor(
    private readonly store: AdminStore,
    private readonly stats: StatsAggregator,
  ) {}

  async list(): Promise<QuotaInForce[]> {
    const control = await this.store.controlSet();
    const reported = new Set(this.stats.current().quotas.map((q) => q.quota));
    return quotasInForce(control, reported).map((e) => ({
      name: e.name,
      source: QuotaSource[e.source],
      provider: e.provider,
      match: e.match,
      limits: e.limits?.map(toLimit),
      limitsKnown: e.limitsKnown,
      readOnly: e.readOnly,
      overrideHint: e.overrideHint,
      reported: e.reported,
    }));
  }
}
