import { UseGuards } from '@nestjs/common';
import { Args, Int, Query, Resolver } from '@nestjs/graphql';
import { AdminAuthGuard } from '../graphql/auth.guard';
import { DEFAULT_AUDIT_PAGE } from '../graphql/query-cost';
import { AuditService } from './audit.service';
import { AuditEntry } from './audit.types';

@Resolver(() => AuditEntry)
@UseGuards(AdminAuthGuard)
export class AuditResolver {
  constructor(private readonly audit: AuditService) {}

  @Query(() => [AuditEntry], { description: 'Newest first; limit 1..1000 (default 100).' })
  auditLog(
    @Args('limit', { type: () => Int, nullable: true, defaultValue: DEFAULT_AUDIT_PAGE })
    limit: number,
  ): Promise<AuditEntry[]> {
    return this.audit.latest(limit);
  }
}
