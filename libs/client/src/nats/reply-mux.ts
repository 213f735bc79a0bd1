import { randomBytes } from 'node:crypto';
// Types only: the HTTP client works without the nats package installed.
import type { Msg, MsgHdrs, NatsConnection, NatsError, Subscription } from 'nats';
import type { UnavailableReason } from '../errors';
import { timerDelayMs } from '../timeouts';
import { TRACEPARENT, TRACESTATE, type TraceHeaders } from '../trace-context';

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

/**
 * NATS headers carrying the caller's trace context. nats is loaded here, by a traced request only:
 * a client that has a NATS connection has it installed.
 */
function traceHeaders(trace: TraceHeaders): MsgHdrs {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const nats = require('nats') as { headers(): MsgHdrs };
  const hdrs = nats.headers();
  hdrs.set(TRACEPARENT, trace.traceparent);
  if (trace.tracestate !== undefined) hdrs.set(TRACESTATE, trace.tracestate);
  return hdrs;
}

/** An inbox of this client's own under the connection's inboxPrefix (default `_INBOX`). */
function newInbox(connection: NatsConnection): string {
  const prefix = (connection as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
  return `${prefix || '_INBOX'}.${randomBytes(12).toString('base64url')}`;
}

// Random bytes drawn in blocks: one call to the system's generator per 256 requests.
const TOKEN_BYTES = 12;
const BLOCK_BYTES = TOKEN_BYTES * 256;
let block = Buffer.alloc(0);
let drawn = BLOCK_BYTES;

/**
 * A reply token no one can guess (96 random bits). Backends that share a NATS user read each
 * other's inboxes; with tokens that count up, one that saw a reply subject could name the next
 * one as the reply subject of a request of its own, and its answer would settle another
 * backend's call. It can only see a token once its reply has settled it.
 */
export function unguessableToken(): string {
  if (drawn === BLOCK_BYTES) {
    block = randomBytes(BLOCK_BYTES);
    drawn = 0;
  }
  drawn += TOKEN_BYTES;
  return block.toString('base64url', drawn - TOKEN_BYTES, drawn);
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
  private readonly entries = new Map<string, Entry>();
  private readonly subscription: Subscription;
  private idleWaiters: Array<() => void> = [];
  private readonly expireBound = (token: string): void => this.settleFailure(token, 'timeout');

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

  /**
   * Publishes `data` on `subject` with a reply subject of its own; the waiter hears once. The
   * token returned cancels it ('' when it failed at once).
   */
  request(
    subject: string,
    data: Uint8Array,
    waiter: ReplyWaiter,
    timeoutMs: number,
    trace?: TraceHeaders,
  ): string {
    if (this.connection.isClosed()) {
      waiter.onFailure('connection-closed');
      return '';
    }
    const token = unguessableToken();
    const timer = setTimeout(this.expireBound, timerDelayMs(timeoutMs), token);
    this.entries.set(token, { waiter, timer });
    try {
      const reply = `${this.inbox}.${token}`;
      if (trace === undefined) this.connection.publish(subject, data, { reply });
      else this.connection.publish(subject, data, { reply, headers: traceHeaders(trace) });
    } catch {
      this.settleFailure(token, 'connection-closed');
    }
    return token;
  }

  /** Forgets a request whose caller left (aborted); a late reply is dropped. */
  cancel(token: string): void {
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
    const token = msg.subject.slice(this.prefixLength);
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

  private settleFailure(token: string, reason: UnavailableReason): void {
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
