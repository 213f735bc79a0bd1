/** Where the store reads time (epoch ms): updatedAt, audit entries, the seeding ledger. */
export interface StoreClock {
  now(): number;
}

/** Injection token of the StoreClock; StoreModule provides Date.now, tests override it. */
export const STORE_CLOCK = Symbol('StoreClock');

export const systemStoreClock: StoreClock = { now: () => Date.now() };
