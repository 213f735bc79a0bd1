import type { LeaseAsk } from '../../apps/limiter/src/cluster/redis-quota-store';

/** A replica's capacity lease call (driver.lua's lease op) for one limit, `over` what differs. */
export const leaseAsk = (over: Partial<LeaseAsk> = {}): LeaseAsk => ({
  holder: 'a',
  prevSeq: 0,
  replicas: 1,
  ttlMs: 1000,
  horizonMs: 100,
  approved: 0,
  denied: 0,
  want: [10],
  need: [1],
  unspent: [0],
  ...over,
});
