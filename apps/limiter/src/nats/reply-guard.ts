import { DEFAULT_NATS_INBOX_PREFIXES } from '@app/contracts';
import { ThrottledLog } from '@app/logging';
import type { Msg } from 'nats';

// A requester names its reply subject at will: a flood of refused ones writes a bounded number of lines.
const refusedLog = new ThrottledLog('NatsResponder', 'nats.reply-refused', 'warn');

/**
 * Where the limiter will not publish an answer. A requester chooses its reply subject, and the
 * limiter's NATS user may publish on any reply subject it was asked to answer (allow_responses), so
 * a caller naming `$JS.API.STREAM.PURGE.KV_<bucket>` would have the limiter purge the control
 * bucket, and one naming the limiter's inbox would deliver into its KV watch. Refused: every `$`
 * subject (JetStream, KV, the system account), the service's own subjects (`<prefix>` and below),
 * and `inboxes`. The admin's inbox is not among them: the admin asks the request subjects too
 * (usage records), and its reply subjects are as unguessable as nats.js makes them to those who
 * cannot read them. A refused message is not served (nothing is charged), counted and logged.
 */
export class ReplyGuard {
  private refusedCount = 0;
  private readonly prefixes: readonly string[];

  constructor(subjectPrefix: string, inboxes: readonly string[]) {
    this.prefixes = [subjectPrefix, ...inboxes];
  }

  /** The guard of the limiter's request subjects: its own inboxes (default and configured). */
  static forRequests(subjectPrefix: string, ownInbox: string | undefined): ReplyGuard {
    const inboxes = new Set<string>([DEFAULT_NATS_INBOX_PREFIXES.limiter]);
    if (ownInbox !== undefined) inboxes.add(ownInbox);
    return new ReplyGuard(subjectPrefix, [...inboxes]);
  }

  /** Replies refused so far (`ratelimit_nats_reply_refused_total`). */
  get refused(): number {
    return this.refusedCount;
  }

  /** True (counted and logged) when `msg` asks for its answer where the limiter never publishes. */
  refuses(msg: Msg): boolean {
    const reply = msg.reply;
    if (reply === undefined || reply === '' || !this.isProtected(reply)) return false;
    this.refusedCount += 1;
    refusedLog.write(() => ({
      msg: `${msg.subject}: refused a request whose reply subject is "${reply.slice(0, 200)}"`,
      subject: msg.subject,
    }));
    return true;
  }

  private isProtected(reply: string): boolean {
    if (reply.charCodeAt(0) === 36 /* $ */) return true;
    for (const prefix of this.prefixes) {
      if (
        reply.startsWith(prefix) &&
        (reply.length === prefix.length || reply[prefix.length] === '.')
      ) {
        return true;
      }
    }
    return false;
  }
}
