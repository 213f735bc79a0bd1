import { randomBytes } from 'node:crypto';
// Types only: the HTTP client works without the nats package installed.
import type { Msg, NatsConnection, NatsError, Subscription } from 'nats';
import type { UnavailableReason } from '../errors';
import { timerDelayMs } from '../timeouts';

/** Whoever waits for the reply to one published request. */
export interface ReplyWaiter {
  onReply(data: Uint8Array): void;
  onFailure(reason: UnavailableReason): void;
}

interface Entry {
  readonly waiter: ReplyWaiter;
  readonly timer: NodeJS.Timeout;
}

const NO_RESPONDERS = 503;

/** An inbox of this client's own under the connection's inboxPrefix (default `_INBOX`). */
function newInbox(connection: NatsConnection): string {
  const prefix = (connection as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
  return `${prefix || '_INBOX'}.${randomBytes(12).toString('base64url')}`;
}

/**
 * One inbox subscription for every request of a client (`<inbox>.<token>`), as nats.js's own
 * muxed request does, so a request costs a publish and a map entry, never a subscription. The
 * server's no-responders status (503 on the reply subject) and the connection closing fail the
 * waiters; each request has one timer.
 */
export class ReplyMux {
  private readonly inbox: string;
  private readonly prefixLength: number;
  private readonly entries = new Map<number, Entry>();
  private readonly subscription: Subscription;
  private nextToken = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly expireBound = (token: number): void => this.settleFailure(token, 'timeout');

  constructor(private readonly connection: NatsConnection) {
    // The connection's own inboxPrefix, so NATS permissions written for its inboxes still hold.
    this.inbox = newInbox(connection);
    this.prefixLength = this.inbox.length + 1;
    this.subscription = connection.subscribe(`${this.inbox}.*`, {
      callback: (error, msg) => this.onMessage(error, msg),
    });
    // Waiters of a connection that closes are answered at once, not at their timeouts.
    void connection.closed().then(() => this.failAll('connection-closed'));
  }

  get size(): number {
    return this.entries.size;
  }

  /** Publishes `data` on `subject` with a reply subject of its own; the waiter hears once. */
  request(subject: string, data: Uint8Array, waiter: ReplyWaiter, timeoutMs: number): number {
    if (this.connection.isClosed()) {
      waiter.onFailure('connection-closed');
      return -1;
    }
    const token = (this.nextToken = (this.nextToken + 1) % Number.MAX_SAFE_INTEGER);
    const timer = setTimeout(this.expireBound, timerDelayMs(timeoutMs), token);
    this.entries.set(token, { waiter, timer });
    try {
      this.connection.publish(subject, data, { reply: `${this.inbox}.${token}` });
    } catch {
      this.settleFailure(token, 'connection-closed');
    }
    return token;
  }

  /** Forgets a request whose caller left (aborted); a late reply is dropped. */
  cancel(token: number): void {
    const entry = this.entries.get(token);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.entries.delete(token);
    this.notifyIfIdle();
  }

  /** Resolves once no request waits for a reply. */
  idle(): Promise<void> {
    if (this.entries.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  unsubscribe(): void {
    if (!this.subscription.isClosed()) this.subscription.unsubscribe();
  }

  private onMessage(error: NatsError | null, msg: Msg): void {
    if (error !== null) return;
    const token = Number(msg.subject.slice(this.prefixLength));
    const entry = this.entries.get(token);
    if (entry === undefined) return; // timed out or aborted already
    clearTimeout(entry.timer);
    this.entries.delete(token);
    if (msg.data.length === 0 && msg.headers?.code === NO_RESPONDERS) {
      entry.waiter.onFailure('no-responders');
    } else {
      entry.waiter.onReply(msg.data);
    }
    this.notifyIfIdle();
  }

  private settleFailure(token: number, reason: UnavailableReason): void {
    const entry = this.entries.get(token);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.entries.delete(token);
    entry.waiter.onFailure(reason);
    this.notifyIfIdle();
  }

  private failAll(reason: UnavailableReason): void {
    for (const token of [...this.entries.keys()]) this.settleFailure(token, reason);
  }

  private notifyIfIdle(): void {
    if (this.entries.size !== 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
