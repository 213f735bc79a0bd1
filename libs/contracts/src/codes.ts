/** Reply codes and the HTTP status each one maps to (docs/contract.md, Reply codes). */

export const REPLY_CODES = [
  'OK',
  'RATE_LIMITED',
  'QUEUE_FULL',
  'WAIT_TIMEOUT',
  'CONCURRENCY_LIMITED',
  'COST_EXCEEDS_LIMIT',
  'UNKNOWN_QUOTA',
  'INVALID_REQUEST',
  'UNAVAILABLE',
] as const;

export type ReplyCode = (typeof REPLY_CODES)[number];

const replyCodeSet: ReadonlySet<string> = new Set(REPLY_CODES);

export function isReplyCode(value: unknown): value is ReplyCode {
  return typeof value === 'string' && replyCodeSet.has(value);
}

/** HTTP status of a reply on the JSON API (`/v1/*`); the body is always the reply JSON. */
export function httpStatusForCode(code: ReplyCode): number {
  switch (code) {
    case 'OK':
      return 200;
    case 'RATE_LIMITED':
    case 'QUEUE_FULL':
    case 'WAIT_TIMEOUT':
    case 'CONCURRENCY_LIMITED':
      return 429;
    // 429, not 400: the request is well formed and was refused by a limit, as every other 429
    // (docs/contract.md, Reply codes). Whether a cost fits depends on the quota in force, which an
    // operator can raise without the client changing anything, and OpenAI answers the same
    // situation ("Request too large ... tokens per min") with 429. The code tells clients not to
    // retry as is.
    case 'COST_EXCEEDS_LIMIT':
      return 429;
    case 'INVALID_REQUEST':
      return 400;
    case 'UNKNOWN_QUOTA':
      return 404;
    case 'UNAVAILABLE':
      return 503;
  }
}
