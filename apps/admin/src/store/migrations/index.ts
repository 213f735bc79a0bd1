import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121232541 } from './Migration20261121232541';
import { Migration20261124055758 } from './Migration20261124055758';

/**
 * Every migration, oldest first, listed by hand (no glob: the admin is bundled by webpack).
 * A new one is generated from the entities by `node -r @swc-node/register
 * scripts/admin-store-migration.ts`, formatted with prettier (and `async up(): Promise<void>`
 * made `up(): void` when it awaits nothing, for the lint) and appended here; a committed
 * migration is never edited. Names are given explicitly so a bundler renaming classes cannot
 * change what the migrations table records.
 */
export const STORE_MIGRATIONS: MigrationObject[] = [
  // The initial schema: quotas, providers, model_quotas, audit_entries, builtin_seeds.
  { name: 'Migration20261121232541', class: Migration20261121232541 },
  // quotas.match, unique: one owner per match pattern (issue 11 point 10).
  { name: 'Migration20261124055758', class: Migration20261124055758 },
];
