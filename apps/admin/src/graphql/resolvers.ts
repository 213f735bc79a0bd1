import { AuditResolver } from '../audit/audit.resolver';
import { ImportResolver } from '../import/import.resolver';
import { ProviderResolver } from '../providers/provider.resolver';
import { QuotaResolver } from '../quotas/quota.resolver';
import { StatsResolver } from '../stats/stats.resolver';
import { ViewerResolver } from '../viewer/viewer.resolver';

/** Every resolver of the admin's schema; the app and the schema printer share this list. */
export const RESOLVERS = [
  QuotaResolver,
  ProviderResolver,
  StatsResolver,
  AuditResolver,
  ImportResolver,
  ViewerResolver,
] as const;
