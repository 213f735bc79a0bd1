/**
 * NATS subjects and queue group of docs/contract.md, NATS. Keys travel in payloads, never in
 * subjects.
 */

export const DEFAULT_NATS_SUBJECT_PREFIX = 'ratelimit.v1';
export const DEFAULT_NATS_QUEUE_GROUP = 'ratelimit-limiter';
/**
 * Each app's reply inboxes (NATS_INBOX_PREFIX): a prefix of its own rather than nats.js's shared
 * `_INBOX`, so NATS permissions can keep the JetStream deliveries and the answers an app receives
 * from every other user (docs/operations.md, NATS users and permissions).
 */
export const DEFAULT_NATS_INBOX_PREFIXES = {
  limiter: '_INBOX_limiter',
  admin: '_INBOX_admin',
} as const;

export interface NatsSubjects {
  readonly acquire: string;
  readonly acquireBatch: string;
  readonly decide: string;
  readonly release: string;
  readonly usage: string;
  readonly stats: string;
}

// A prefix is one or more dot-separated tokens without wildcards or whitespace, so that every
// subject built from it is a literal subject a queue subscription can listen on.
const SUBJECT_PREFIX = /^[^\s.*>]+(\.[^\s.*>]+)*$/;

export function isValidSubjectPrefix(prefix: string): boolean {
  return SUBJECT_PREFIX.test(prefix);
}

export function natsSubjects(prefix: string = DEFAULT_NATS_SUBJECT_PREFIX): NatsSubjects {
  if (!isValidSubjectPrefix(prefix)) {
    throw new Error(
      `NATS_SUBJECT_PREFIX: "${prefix}" must be dot-separated tokens without spaces or wildcards`,
    );
  }
  return {
    acquire: `${prefix}.acquire`,
    acquireBatch: `${prefix}.acquire.batch`,
    decide: `${prefix}.decide`,
    release: `${prefix}.release`,
    usage: `${prefix}.usage`,
    stats: `${prefix}.stats`,
  };
}
