import {
  connect,
  ErrorCode,
  Events,
  type ConnectionOptions,
  type NatsConnection,
  type Status,
} from 'nats';
import { OncePerOutage } from '@app/logging';
import { failureReason } from './failure-reason';

/** A first connection (or one after a close) is retried from this delay... */
const FIRST_RETRY_MS = 100;
/** ...up to this one, so a NATS server that comes up is found within about this long. */
const MAX_RETRY_MS = 2_000;
/** A dial not through by then fails (nats.js's default is 20 s). */
const DIAL_TIMEOUT_MS = 10_000;
/** Once connected, nats.js retries a lost server this often (plus jitter), forever. */
const RECONNECT_WAIT_MS = 500;
const RECONNECT_JITTER_MS = 250;

/**
 * `connecting`: dialling (first time, or after a close); `connected`; `disconnected`: lost, nats.js
 * reconnects; `closed`: the connection ended, a new one is dialled unless the link was stopped.
 */
export type NatsLinkState = 'connecting' | 'connected' | 'disconnected' | 'closed';
/** `connect`: a new connection object; `reconnect`: the same one back after a disconnect. */
export type NatsUpEvent = 'connect' | 'reconnect';

export interface NatsLinkEvents {
  up(nc: NatsConnection, event: NatsUpEvent): void;
  /** The state, or the reason of the last failure (undefined while connected), changed. */
  changed?(state: NatsLinkState, reason: string | undefined): void;
}

/** Nest's Logger, as far as the link uses it. */
export interface LinkLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * One app's connection to NATS, kept up for as long as the app runs: the limiter and the admin
 * both start without NATS and connect when it comes up. The first connection (and a new one after
 * the connection closed by itself: credentials refused twice, a fatal error) is dialled here with
 * backoff, because nats.js's own `waitOnFirstConnect` loop cannot be cancelled and gives up on an
 * authorization error. Once connected, nats.js reconnects by itself and resends subscriptions.
 *
 * A failure is logged once per outage for each reason (a refused certificate may show as the
 * server's alert one time and as a reset connection the next): a NATS that refuses this app's
 * credentials is a state, not a stream of errors. No log line carries a secret.
 */
export class NatsLink {
  private nc: NatsConnection | undefined;
  private current: NatsLinkState = 'connecting';
  private reason: string | undefined;
  /** Reasons logged since the link was last up: each is logged once per outage. */
  private readonly logged = new OncePerOutage();
  private stopped = false;
  private dialing: Promise<void> | undefined;
  private wakeRetry: (() => void) | undefined;
  /** The servers, for log lines: the options hold them without credentials. */
  private readonly servers: string;

  constructor(
    private readonly options: ConnectionOptions,
    private readonly events: NatsLinkEvents,
    private readonly logger: LinkLogger,
  ) {
    this.servers = [options.servers ?? []].flat().join(',');
  }

  get state(): NatsLinkState {
    return this.current;
  }

  /** Why the last attempt failed or the connection went down; undefined while connected. */
  get lastError(): string | undefined {
    return this.reason;
  }

  /** The connection while it is up; undefined while connecting, disconnected or closing. */
  get connection(): NatsConnection | undefined {
    const nc = this.nc;
    if (this.current !== 'connected' || nc === undefined) return undefined;
    return nc.isClosed() || nc.isDraining() ? undefined : nc;
  }

  start(): void {
    if (this.dialing === undefined && !this.stopped) this.dialing = this.dialUntilUp();
  }

  /**
   * No more dialling: a pending retry ends at once. A dial already on the wire cannot be cancelled
   * (nats.js has no way to), so it is not waited for: should it still succeed, it finds the link
   * stopped and closes its connection. A NATS that accepts and never answers would otherwise hold
   * a shutdown for the dial's whole timeout.
   */
  stop(): void {
    this.stopped = true;
    this.wakeRetry?.();
  }

  /**
   * Stops dialling and ends the connection: drained (subscriptions, then what is still to be
   * published) within `ms`, closed then; closed at once when no server is there to drain to.
   * Answers how it ended (undefined: there was no connection to end).
   */
  async close(ms: number): Promise<'drained' | 'closed' | undefined> {
    this.stopped = true;
    this.wakeRetry?.();
    const nc = this.nc;
    if (nc === undefined || nc.isClosed()) return undefined;
    if (this.current !== 'connected' && !nc.isDraining()) {
      await nc.close();
      return 'closed';
    }
    let cut = false;
    const cutOff = setTimeout(
      () => {
        cut = true;
        void nc.close().catch(() => undefined);
      },
      Math.max(0, ms),
    );
    if (!nc.isDraining()) void nc.drain().catch(() => undefined);
    await nc.closed();
    clearTimeout(cutOff);
    return cut ? 'closed' : 'drained';
  }

  private async dialUntilUp(): Promise<void> {
    let retryMs = FIRST_RETRY_MS;
    while (!this.stopped) {
      this.enter('connecting');
      try {
        const nc = await connect({
          ...this.options,
          timeout: DIAL_TIMEOUT_MS,
          maxReconnectAttempts: -1,
          reconnectTimeWait: RECONNECT_WAIT_MS,
          reconnectJitter: RECONNECT_JITTER_MS,
          reconnectJitterTLS: RECONNECT_JITTER_MS,
        });
        if (this.stopped) {
          await nc.close();
          return;
        }
        this.connected(nc);
        return;
      } catch (error) {
        this.failed(await this.explain(error));
      }
      await this.pause(retryMs);
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    }
  }

  /**
   * A dial that timed out may hide why. With reconnects on, nats.js does not fail a first dial
   * whose connection the server closes during the handshake (a TLS 1.3 server refusing the
   * client's certificate does so after the client finished): it waits out its timer. One dial
   * without reconnects fails with the close's own error, which is the reason to report.
   */
  private async explain(error: unknown): Promise<string> {
    if (!isTimeout(error) || this.stopped) return failureReason(error, this.options);
    try {
      const probe = await connect({ ...this.options, reconnect: false, timeout: DIAL_TIMEOUT_MS });
      await probe.close();
    } catch (probeError) {
      if (!isTimeout(probeError)) return failureReason(probeError, this.options);
    }
    return failureReason(error, this.options);
  }

  private connected(nc: NatsConnection): void {
    this.nc = nc;
    this.reason = undefined;
    this.logged.up();
    this.enter('connected');
    this.logger.log(`NATS connected to ${nc.getServer()}`);
    void this.follow(nc);
    this.tell(nc, 'connect');
  }

  /** Follows the connection's status; dials anew should it ever close by itself. */
  private async follow(nc: NatsConnection): Promise<void> {
    const closed = nc.closed();
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) {
        if (this.current === 'connected') this.logger.warn('NATS disconnected; reconnecting');
        this.enter('disconnected');
      } else if (status.type === Events.Reconnect) {
        this.reason = undefined;
        this.logged.up();
        this.enter('connected');
        this.logger.log(`NATS reconnected to ${nc.getServer()}`);
        this.tell(nc, 'reconnect');
      } else if (status.type === Events.Error) {
        this.refused(status);
      }
    }
    const error = await closed;
    if (this.nc !== nc) return;
    this.nc = undefined;
    if (this.stopped) {
      this.enter('closed');
      return;
    }
    const reason = error ? failureReason(error, this.options) : 'closed by the server';
    this.logger.error(`NATS connection closed: ${reason}; dialling again`);
    this.reason = reason;
    this.enter('closed');
    this.dialing = this.dialUntilUp();
  }

  /** A server's -ERR: while reconnecting, the only word nats.js gives of why (credentials). */
  private refused(status: Status): void {
    const code = typeof status.data === 'string' ? status.data : 'error';
    const context = status.permissionContext;
    const text = `${code}${context ? ` (${context.operation} ${context.subject})` : ''}`;
    if (this.logged.firstTime(text)) this.logger.warn(`NATS server refused: ${text}`);
    if (this.current !== 'connected') {
      this.reason = text;
      this.enter(this.current);
    }
  }

  private failed(reason: string): void {
    if (this.logged.firstTime(reason)) {
      this.logger.warn(
        `NATS: no connection to ${this.servers}: ${reason} (trying again; this reason is not logged again until connected)`,
      );
    }
    if (reason === this.reason) return;
    this.reason = reason;
    this.enter(this.current);
  }

  private enter(state: NatsLinkState): void {
    this.current = state;
    try {
      this.events.changed?.(state, this.reason);
    } catch (error) {
      this.logger.error(`NATS state handler failed: ${failureReason(error, this.options)}`);
    }
  }

  private tell(nc: NatsConnection, event: NatsUpEvent): void {
    try {
      this.events.up(nc, event);
    } catch (error) {
      this.logger.error(`NATS ${event} handler failed: ${failureReason(error, this.options)}`);
    }
  }

  /** A retry delay that stop() cuts short. */
  private pause(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeRetry = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => (this.wakeRetry = undefined));
  }
}

function isTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === ErrorCode.Timeout;
}
