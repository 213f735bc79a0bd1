import { BetterSqliteDriver, MikroORM, type Options } from '@mikro-orm/better-sqlite';
import { Migrator } from '@mikro-orm/migrations';
import type { MigrationObject } from '@mikro-orm/core';
import type BetterSqlite3 from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { STORE_ENTITIES } from './entities';
import { STORE_MIGRATIONS } from './migrations';

export const ADMIN_DATABASE_FILE = 'admin.sqlite';
/** A writer holding the file (another process, a checkpoint) is waited for, not an error. */
export const STORE_BUSY_TIMEOUT_MS = 5000;

/** The admin's ORM: MikroORM 6 on better-sqlite3. */
export type StoreOrm = MikroORM;

export function adminDatabasePath(dataDir: string): string {
  return join(resolve(dataDir), ADMIN_DATABASE_FILE);
}

/**
 * Runs on every connection the pool opens (knex keeps one for SQLite, and opens a new one if it
 * ever drops it), so these never depend on which connection a query lands on.
 */
function configureConnection(db: BetterSqlite3.Database): void {
  db.pragma(`busy_timeout = ${STORE_BUSY_TIMEOUT_MS}`);
  db.pragma('journal_mode = WAL');
  // With WAL, NORMAL survives a process crash; only a power loss may lose the last commit.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
}

/**
 * The configuration for `<dataDir>/admin.sqlite`: explicit entities and migrations, no file
 * access at run time (the admin runs as one webpack bundle), nothing created outside migrations.
 * `migrations` may be replaced (the migration script passes the list it has so far).
 */
export function storeOrmConfig(
  dataDir: string,
  migrations: MigrationObject[] = STORE_MIGRATIONS,
): Options {
  return {
    driver: BetterSqliteDriver,
    dbName: adminDatabasePath(dataDir),
    entities: STORE_ENTITIES,
    discovery: { disableDynamicFileAccess: true, requireEntitiesArray: true },
    extensions: [Migrator],
    migrations: {
      migrationsList: migrations,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
      emit: 'ts',
    },
    // The schema comes from migrations only.
    ensureDatabase: false,
    allowGlobalContext: false,
    pool: {
      min: 1,
      max: 1,
      afterCreate: (
        connection: BetterSqlite3.Database,
        done: (err: Error | null, connection: BetterSqlite3.Database) => void,
      ) => {
        try {
          configureConnection(connection);
          done(null, connection);
        } catch (error) {
          done(error instanceof Error ? error : new Error(String(error)), connection);
        }
      },
    },
    debug: false,
  };
}

/**
 * Opens the ORM on `<dataDir>/admin.sqlite` (creating the directory) and applies every pending
 * migration before returning, so nothing reads an old schema. The ORM is closed if that fails.
 */
export async function openStoreOrm(
  dataDir: string,
  migrations: MigrationObject[] = STORE_MIGRATIONS,
): Promise<StoreOrm> {
  mkdirSync(resolve(dataDir), { recursive: true });
  const orm = await MikroORM.init(storeOrmConfig(dataDir, migrations));
  try {
    await orm.getMigrator().up();
    return orm;
  } catch (error) {
    await orm.close(true);
    throw error;
  }
}
