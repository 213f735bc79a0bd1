/**
 * libs/engine: the rate-limit algorithms and the sharded actors that own keys. Pure TypeScript:
 * no framework, no I/O, no clock of its own (every operation takes `now`).
 */
export { Engine } from './engine';
export type { EngineOptions, Outcome, QuotaCounters } from './engine';
export { PendingAcquire } from './shard/waiters';
/** A refusal in the engine's own reply shape, for hosts that refuse before the engine decides. */
export { refusal } from './shard/decision';
export { EngineError, InvalidQuotaError, SnapshotError } from './errors';
export { compileQuota, DEFAULT_PRECISION, MAX_LOG_SIZE, MAX_QUEUE_WAIT_MS } from './quota/compile';
export type { SlidingLog, StoredLimitSpec } from './quota/compile';
export { QuotaResolver } from './quota/resolver';
export { PreparedQuotas } from './quota/prepared-quotas';
export { costFor } from './quota/cost';
export { fnv1a } from './hash/fnv1a';
export { systemClock, VirtualClock } from './clock';
export type { Clock } from './clock';
export type { EngineSnapshot, QuotaSnapshot, LeaseSnapshot } from './snapshot';
export { StoredLayout } from './changes';
export type { ChangeCursor, ChangedQuota, ChangedRows, RestoredKey, StoredLease } from './changes';
export type { HeldKey, KeyListCursor } from './key-listing';
export * from './types';
