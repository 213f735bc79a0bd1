import { UseGuards } from '@nestjs/common';
import { Args, Int, Query, Resolver } from '@nestjs/graphql';
import { AdminAuthGuard } from '../graphql/auth.guard';
import { AuditService } from './audit.service';
import { AuditEntry } from './audit.types';

@Resolver(() => AuditEntry)
@UseGuards(AdminAuthGuard)
export class AuditResolver {
  constructor(private readonly audit: AuditService) {}

  @Query(() => [AuditEntry], {
    description: 'Newest first; limit 1..1000 (default 100).',
    complexity: ({ args, childComplexity }) => Number(args['limit'] ?? 100) * childComplexity,
  })
  auditLog(
    @Args('limit', { type: () => Int, nullable: true, defaultValue: 100 }) limit: number,
  ): Promise<AuditEntry[]> {
    return this.audit.latest(limit);
  }
}
