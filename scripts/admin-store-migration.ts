/**
 * Generates the admin store's next migration from its entities:
 *   node -r @swc-node/register scripts/admin-store-migration.ts
 * It applies the committed migrations to a scratch database, diffs that schema against the
 * entities and writes the difference as a TypeScript class into apps/admin/src/store/migrations/.
 * Format it with prettier, add it to STORE_MIGRATIONS there, and commit it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openStoreOrm } from '../apps/admin/src/store/orm-config';

const MIGRATIONS_DIR = resolve(__dirname, '../apps/admin/src/store/migrations');

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'admin-store-migration-'));
  const orm = await openStoreOrm(scratch);
  try {
    const result = await orm.getMigrator().createMigration(MIGRATIONS_DIR);
    if (result.fileName === '') {
      console.log('the committed migrations already match the entities; nothing written');
    } else {
      console.log(`wrote ${join(MIGRATIONS_DIR, result.fileName)}`);
      for (const statement of result.diff.up) console.log(`  ${statement}`);
    }
  } finally {
    await orm.close(true);
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
