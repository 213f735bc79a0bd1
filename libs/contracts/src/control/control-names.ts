import { isValidSubjectPrefix } from '../subjects';

/**
 * Where the admin and the limiters meet on NATS: the project's own subjects and bucket
 * (docs/contract.md, NATS). Everything hangs off NATS_SUBJECT_PREFIX, so two deployments on one
 * NATS never mix.
 */
export interface ControlNames {
  /** JetStream KV bucket holding the admin's quotas and provider profiles, one entry each. */
  readonly bucket: string;
  /** Limiters publish a StatsReport here every STATS_REPORT_EVERY_MS. */
  readonly statsReport: string;
  /** Admin asks every limiter (no queue group) for a key's stats; each replica answers. */
  readonly keyStats: string;
  /** Admin asks every limiter to forget a key's counts; each replica answers. */
  readonly resetKey: string;
}

export function controlNames(prefix: string): ControlNames {
  if (!isValidSubjectPrefix(prefix)) {
    throw new Error(
      `NATS_SUBJECT_PREFIX: "${prefix}" must be dot-separated tokens without spaces or wildcards`,
    );
  }
  // KV bucket names allow [A-Za-z0-9_-] only.
  const bucket = `${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}_control`;
  return {
    bucket,
    statsReport: `${prefix}.control.stats`,
    keyStats: `${prefix}.control.keystats`,
    resetKey: `${prefix}.control.reset`,
  };
}

/**
 * NATS headers of every StatsReport message: the publishing replica and its NATS_QUEUE_GROUP, so
 * that limiters can tell the replicas of their own queue group (which share its requests, and so
 * multiply its local quotas) without parsing a report body that grows with the quotas.
 */
export const STATS_REPORT_HEADERS = {
  replica: 'Ratelimit-Replica',
  queueGroup: 'Ratelimit-Queue-Group',
} as const;

/**
 * NATS headers of signed control messages (a keyStats or reset request, a StatsReport): the
 * signature line (docs/contract.md, "Signed control").
 */
export const CONTROL_HEADERS = {
  signature: 'Ratelimit-Signature',
} as const;

/** How often a limiter reports its counters: twice per statsUpdated period. */
export const STATS_REPORT_EVERY_MS = 500;
/** A replica silent this long has left: its counts leave the cluster-wide sum. */
export const REPLICA_SILENT_AFTER_MS = 3000;

/**
 * A stats report larger than this is refused unread (a limiter reports its quotas in force:
 * about 100 bytes each; NATS's default max_payload is this size too).
 */
export const MAX_STATS_REPORT_BYTES = 1024 * 1024;
