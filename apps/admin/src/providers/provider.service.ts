import { isQuotaName, type ControlProvider, isProviderName } from '@app/contracts';
import { Injectable } from '@nestjs/common';
import { ControlPublisher } from '../control';
import { userInputError, type FieldIssue } from '../graphql/user-input-error';
import { AdminStore } from '../store';
import type { Provider } from './provider.types';

function toProvider(p: ControlProvider): Provider {
  return { name: p.name, enabled: p.enabled, models: p.models.map((m) => ({ ...m })) };
}

function checkProviderName(name: string, issues: FieldIssue[], field = 'name'): void {
  if (!isProviderName(name)) {
    issues.push({
      field,
      message: 'must be a lowercase word [a-z][a-z0-9_-]* of at most 64 characters',
    });
  }
}

function checkLimit(value: number, field: string, issues: FieldIssue[]): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    issues.push({ field, message: 'must be an integer >= 0 (0 = unlimited)' });
  }
}

/** LLM provider profiles: enabling one serves a quota per model on every limiter. */
@Injectable()
export class ProviderService {
  constructor(
    private readonly store: AdminStore,
    private readonly publisher: ControlPublisher,
  ) {}

  async list(): Promise<Provider[]> {
    return (await this.store.providers()).map(toProvider);
  }

  async get(name: string): Promise<Provider | undefined> {
    const p = await this.store.provider(name);
    return p === undefined ? undefined : toProvider(p);
  }

  async setEnabled(name: string, enabled: boolean, actor: string): Promise<Provider> {
    const issues: FieldIssue[] = [];
    checkProviderName(name, issues);
    if (issues.length > 0) throw userInputError(issues);
    const { after, changed } = await this.store.setProviderEnabled(name, enabled, actor);
    if (changed) await this.publisher.publishProvider(after);
    return toProvider(after);
  }

  async setModelQuota(
    provider: string,
    model: { model: string; maxRpm: number; maxTpm: number; maxRpd: number },
    actor: string,
  ): Promise<Provider> {
    const issues: FieldIssue[] = [];
    checkProviderName(provider, issues, 'provider');
    if (!isQuotaName(model.model)) {
      issues.push({ field: 'model', message: 'must be 1..128 characters of [A-Za-z0-9._:-]' });
    }
    checkLimit(model.maxRpm, 'maxRpm', issues);
    checkLimit(model.maxTpm, 'maxTpm', issues);
    checkLimit(model.maxRpd, 'maxRpd', issues);
    if (issues.length > 0) throw userInputError(issues);
    const { after, changed } = await this.store.setModelQuota(provider, model, actor);
    if (changed) await this.publisher.publishProvider(after);
    return toProvider(after);
  }
}
