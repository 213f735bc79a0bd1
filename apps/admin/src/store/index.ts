export {
  AdminStore,
  AUDIT_ACTIONS,
  STORE_ORM,
  type AuditEntry,
  type Change,
  type ImportInput,
  type ImportResult,
  type QuotaPage,
  type StoreSizes,
} from './admin-store';
export { MatchTakenError, type MatchConflict } from './match-taken-error';
export { STORE_CLOCK, systemStoreClock, type StoreClock } from './clock';
export { ADMIN_DATABASE_FILE, adminDatabasePath, openStoreOrm, type StoreOrm } from './orm-config';
export { seedBuiltInProviders, type SeedResult } from './seed';
export { StoreModule, type StoreModuleOptions, type StoreSettings } from './store.module';
