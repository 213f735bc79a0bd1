import { Injectable } from '@nestjs/common';
import { ControlPublisher } from '../control';
import { notFoundError, userInputError } from '../graphql/user-input-error';
import { AdminStore, MatchTakenError, type QuotaPage } from '../store';
import { QuotaEvents } from './quota-events';
import type { QuotaInput } from './quota.inputs';
import { toQuota } from './quota-mapping';
import { matchTakenIssues, validateQuotaInput } from './quota-validation';
import { QuotaChangeKind, type Quota } from './quota.types';

/** The largest page of `quotas(first, after)`. */
export const MAX_QUOTA_PAGE = 1000;

/**
 * Quotas the admin manages: validated, stored with their audit entry in one transaction, then
 * published to the limiters' KV bucket. If NATS is down the change is stored and reaches the
 * limiters at the next reconcile (on reconnect).
 */
@Injectable()
export class QuotaService {
  constructor(
    private readonly store: AdminStore,
    private readonly publisher: ControlPublisher,
    private readonly events: QuotaEvents,
  ) {}

  async list(page: QuotaPage = {}): Promise<Quota[]> {
    const { first } = page;
    if (
      first !== undefined &&
      !(Number.isInteger(first) && first >= 1 && first <= MAX_QUOTA_PAGE)
    ) {
      throw userInputError([
        { field: 'first', message: `must be an integer 1..${MAX_QUOTA_PAGE}` },
      ]);
    }
    return (await this.store.quotas(page)).map(toQuota);
  }

  async get(name: string): Promise<Quota | undefined> {
    const q = await this.store.quota(name);
    return q === undefined ? undefined : toQuota(q);
  }

  async upsert(input: QuotaInput, actor: string): Promise<Quota> {
    const spec = validateQuotaInput(input);
    const { after, changed } = await this.store.saveQuota(spec, actor).catch((error: unknown) => {
      if (!(error instanceof MatchTakenError)) throw error;
      throw userInputError(matchTakenIssues(error, () => 'input', 'input.match'));
    });
    const quota = toQuota(after);
    // The same quota again changes nothing: no KV revision wakes the limiters, no event fires.
    if (!changed) return quota;
    await this.publisher.publishQuota(after);
    this.events.emit({
      name: spec.name,
      change: QuotaChangeKind.upserted,
      quota,
      at: quota.updatedAt,
    });
    return quota;
  }

  async delete(name: string, actor: string): Promise<boolean> {
    const removed = await this.store.deleteQuota(name, actor);
    if (removed === undefined) throw notFoundError(`no quota named "${name}"`);
    await this.publisher.removeQuota(name);
    this.events.emit({ name, change: QuotaChangeKind.deleted, at: new Date() });
    return true;
  }
}
