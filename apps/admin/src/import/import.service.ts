import { ConfigError, type QuotaSpec } from '@app/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { ControlPublisher, LimiterClient } from '../control';
import { userInputError, type FieldIssue } from '../graphql/user-input-error';
import { QuotaEvents } from '../quotas/quota-events';
import { matchTakenIssues, quotaIssues } from '../quotas/quota-validation';
import { toQuota } from '../quotas/quota-mapping';
import { QuotaChangeKind } from '../quotas/quota.types';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import { AdminStore, MatchTakenError } from '../store';
import { parseImport } from './parse-import';
import type { ImportPlan } from './import-plan';
import type { ImportFormat, ImportResult } from './import.types';

/** Longer than propagation's 1 s promise. */
const USAGE_RETRY_MS = 2000;

/**
 * importConfig: parse, check every quota as upsertQuota would, store everything in one
 * transaction (all or nothing), publish, then record go-ratelimit's usage state on the limiters.
 */
@Injectable()
export class ImportService {
  constructor(
    @Inject(ADMIN_SETTINGS) private readonly settings: AdminSettings,
    private readonly store: AdminStore,
    private readonly publisher: ControlPublisher,
    private readonly limiters: LimiterClient,
    private readonly events: QuotaEvents,
  ) {}

  async import(document: string, format: ImportFormat, actor: string): Promise<ImportResult> {
    const plan = this.plan(document, format);
    checkQuotas(plan.quotas);
    const summary = `${plan.source}: ${plan.quotas.length} quotas, ${plan.enableProviders.length} providers, ${plan.models.length} models`;
    const changed = await this.store
      .importAll(
        { quotas: plan.quotas, enableProviders: plan.enableProviders, models: plan.models },
        actor,
        summary,
      )
      .catch((error: unknown) => {
        if (!(error instanceof MatchTakenError)) throw error;
        // A quota named twice is stored with its last spec: name that one.
        const at = (name: string) => plan.quotas.findLastIndex((q) => q.name === name);
        throw userInputError(
          matchTakenIssues(error, (name) => `document: quotas[${at(name)}]`, 'document'),
        );
      });
    await this.publisher.publishEntries([
      ...changed.changedQuotas.map((quota) => ({ kind: 'quota' as const, quota })),
      ...changed.changedProviders.map((provider) => ({ kind: 'provider' as const, provider })),
    ]);
    for (const q of changed.changedQuotas) {
      const quota = toQuota(q);
      this.events.emit({
        name: quota.name,
        change: QuotaChangeKind.upserted,
        quota,
        at: quota.updatedAt,
      });
    }

    const notes = [...plan.notes];
    let usageRecorded = 0;
    for (const u of plan.usage) {
      const outcome = await this.recordUsage(u);
      if (outcome.ok) usageRecorded++;
      else
        notes.push(
          `usage of ${u.key} not recorded: ${outcome.reason ?? outcome.code ?? 'no answer'}`,
        );
    }
    await this.store.record(actor, 'importConfig', plan.source, null, {
      quotas: changed.changedQuotas.map((q) => q.spec.name),
      providers: changed.changedProviders.map((p) => p.name),
      usageRecorded,
    });
    return {
      source: plan.source,
      quotas: changed.changedQuotas.map((q) => q.spec.name),
      providers: changed.changedProviders.map((p) => p.name),
      usageRecorded,
      usageFailed: plan.usage.length - usageRecorded,
      notes,
    };
  }

  /**
   * The limiters learn an imported quota from the KV watch a few milliseconds after the commit;
   * usage that arrives first is UNKNOWN_QUOTA, so it is retried for up to USAGE_RETRY_MS.
   */
  private async recordUsage(
    u: ImportPlan['usage'][number],
  ): ReturnType<LimiterClient['recordUsage']> {
    const deadline = Date.now() + USAGE_RETRY_MS;
    for (;;) {
      const outcome = await this.limiters.recordUsage(u.quota, u.key, u.cost);
      if (outcome.ok || outcome.code !== 'UNKNOWN_QUOTA' || Date.now() > deadline) return outcome;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private plan(document: string, format: ImportFormat): ImportPlan {
    try {
      return parseImport(document, format, { gocc: this.settings.gocc, now: Date.now() });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      throw userInputError(
        error.issues.map((i) => ({
          field: i.path === '' ? 'document' : `document: ${i.path}`,
          message: i.line === undefined ? i.message : `line ${i.line}: ${i.message}`,
        })),
      );
    }
  }
}

/**
 * upsertQuota's checks for every quota, and matches unique within the document. Matches the
 * admin's other quotas have are the store's check, in the transaction that writes.
 */
function checkQuotas(quotas: readonly QuotaSpec[]): void {
  const issues: FieldIssue[] = [];
  const patterns = new Map<string, string>();
  quotas.forEach((q, i) => {
    issues.push(...quotaIssues(q, `document: quotas[${i}]`, (match) => patterns.get(match)));
    if (q.match !== undefined) patterns.set(q.match, q.name);
  });
  if (issues.length > 0) throw userInputError(issues);
}
