import type { AcquireReply } from './acquire';
import type { KeyStats } from './stats';

/** A well-formed AcquireReply that admits, for tests to break one field at a time. */
export const ADMITTED_REPLY: AcquireReply = Object.freeze({
  allowed: true,
  code: 'OK',
  requestId: 'r',
  key: 'k',
  quota: 'q',
  limit: 5,
  remaining: 4,
  resetMs: 1000,
  retryAfterMs: 0,
  waitedMs: 0,
  limitName: 'rps',
  shadow: false,
});

/** Well-formed KeyStats of one limit. */
export const KEY_STATS: KeyStats = Object.freeze({
  key: 'k',
  quota: 'q',
  limits: [{ name: 'rps', unit: 'requests', limit: 5, used: 1, remaining: 4, resetMs: 1000 }],
  queued: 0,
  inFlight: 0,
  approved: 1,
  denied: 0,
  scope: 'local',
});
