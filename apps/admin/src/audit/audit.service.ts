import { Injectable } from '@nestjs/common';
import { userInputError } from '../graphql/user-input-error';
import { AdminStore } from '../store';
import type { AuditEntry } from './audit.types';

export const MAX_AUDIT_PAGE = 1000;

function json(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : JSON.stringify(value);
}

@Injectable()
export class AuditService {
  constructor(private readonly store: AdminStore) {}

  async latest(limit: number): Promise<AuditEntry[]> {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_PAGE) {
      throw userInputError([
        { field: 'limit', message: `must be an integer 1..${MAX_AUDIT_PAGE}` },
      ]);
    }
    const entries = await this.store.auditLog(limit);
    return entries.map((e) => ({
      id: e.id,
      at: new Date(e.at),
      actor: e.actor,
      action: e.action,
      target: e.target,
      before: json(e.before),
      after: json(e.after),
    }));
  }
}
