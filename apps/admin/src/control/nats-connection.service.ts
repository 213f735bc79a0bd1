import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { connect, Events, type ConnectionOptions, type NatsConnection } from 'nats';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import { errorMessage } from './error-message';

/** nats.js retries an unreachable server this often (plus jitter), forever. */
const RECONNECT_WAIT_MS = 500;
const RECONNECT_JITTER_MS = 250;
/** Still not connected this long after start: say so once (the admin keeps working without). */
const UNREACHABLE_WARNING_AFTER_MS = 2_000;
/** A connection that closed by itself (auth expired, fatal error) is dialled again after this. */
const REDIAL_AFTER_MS = 1_000;
/** Shutdown waits at most this long for the drain, then closes. */
const DRAIN_TIMEOUT_MS = 5_000;

/** `connect`: the first connection of this process; `reconnect`: back after a disconnect. */
export type NatsUpEvent = 'connect' | 'reconnect';
export type NatsUpListener = (nc: NatsConnection, event: NatsUpEvent) => void;

/** Thrown out of nats.js's dial loop to end it: the module is shutting down. */
class DialCancelled extends Error {
  constructor() {
    super('the admin is shutting down');
  }
}

/**
 * The admin's one NATS connection. The admin starts without NATS (changes are stored in SQLite and
 * published later), so connecting never blocks start: nats.js dials in the background
 * (`waitOnFirstConnect`) and reconnects forever (`maxReconnectAttempts: -1`).
 *
 * nats.js cannot cancel a `waitOnFirstConnect` dial loop from outside (the connection object
 * exists only once it succeeds), but it asks `reconnectDelayHandler` before every attempt: that
 * handler throws once the module is shutting down, which ends the loop and rejects `connect()`.
 *
 * `connection` is the connection while it is up (undefined while down, so callers answer "not
 * published" / UNAVAILABLE at once instead of queueing into nats.js's reconnect buffer). Listeners
 * registered with `onUp` hear every connect and reconnect: ControlPublisher reconciles the KV
 * bucket there, StatsAggregator subscribes.
 *
 * Shutdown: onModuleDestroy ends a pending dial; beforeApplicationShutdown, which Nest runs after
 * every onModuleDestroy (so the publisher's queued writes have finished), drains the connection.
 */
@Injectable()
export class NatsConnectionService
  implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown
{
  private readonly logger = new Logger('NatsConnection');
  private readonly listeners = new Set<NatsUpListener>();
  private nc: NatsConnection | undefined;
  private up = false;
  private stopping = false;
  private dialing: Promise<void> | undefined;
  private redialTimer: NodeJS.Timeout | undefined;
  /** For the shutdown line: how the connection ended (undefined: there was none to end). */
  ended: 'drained' | 'closed' | undefined;

  constructor(@Inject(ADMIN_SETTINGS) private readonly settings: AdminSettings) {}

  /** False when NATS_URL is empty: the admin runs without NATS. */
  get enabled(): boolean {
    return this.settings.natsUrl !== '';
  }

  /** The connection while it is up; undefined while connecting, disconnected or shut down. */
  get connection(): NatsConnection | undefined {
    const nc = this.nc;
    if (!this.up || nc === undefined || nc.isClosed() || nc.isDraining()) return undefined;
    return nc;
  }

  get isUp(): boolean {
    return this.connection !== undefined;
  }

  /**
   * Calls `listener` on every connect and reconnect, and at once when the connection is up
   * already. Returns the function that removes the listener.
   */
  onUp(listener: NatsUpListener): () => void {
    this.listeners.add(listener);
    const nc = this.connection;
    if (nc !== undefined) this.notify(listener, nc, 'connect');
    return () => this.listeners.delete(listener);
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) {
      this.logger.log('NATS_URL is empty: running without NATS (changes reach no limiter)');
      return;
    }
    this.dialing = this.dial();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.listeners.clear();
    clearTimeout(this.redialTimer);
    // A pending first dial ends within one reconnect wait (see DialCancelled).
    await this.dialing;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.dialing;
    const nc = this.nc;
    // Asked before `up` is cleared, which it reads: asked after, every connection was closed.
    const connected = nc !== undefined && this.isConnectedNow(nc);
    this.up = false;
    if (nc === undefined || nc.isClosed()) return;
    this.ended = 'closed';
    if (nc.isDraining()) {
      await nc.closed();
      return;
    }
    // Draining needs the server; a disconnected connection is simply closed.
    if (!connected) {
      await nc.close();
      return;
    }
    const drained = nc.drain().then(
      () => true,
      () => false,
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), DRAIN_TIMEOUT_MS);
    });
    const ok = await Promise.race([drained, late]).finally(() => clearTimeout(timer));
    if (ok) this.ended = 'drained';
    else if (!nc.isClosed()) await nc.close();
  }

  private isConnectedNow(nc: NatsConnection): boolean {
    return this.nc === nc && this.up && !nc.isClosed();
  }

  private connectionOptions(): ConnectionOptions {
    return {
      servers: this.settings.natsUrl
        .split(',')
        .map((url) => url.trim())
        .filter((url) => url !== ''),
      name: 'ratelimit-admin',
      waitOnFirstConnect: true,
      maxReconnectAttempts: -1,
      reconnectDelayHandler: () => {
        if (this.stopping) throw new DialCancelled();
        return RECONNECT_WAIT_MS + Math.floor(Math.random() * (RECONNECT_JITTER_MS + 1));
      },
    };
  }

  private async dial(): Promise<void> {
    const warning = setTimeout(() => {
      this.logger.warn(
        `NATS not reachable at ${this.settings.natsUrl}; the admin runs without it and ` +
          'connects when it comes up (changes are published then)',
      );
    }, UNREACHABLE_WARNING_AFTER_MS);
    warning.unref();
    try {
      const nc = await connect(this.connectionOptions());
      if (this.stopping) {
        await nc.close();
        return;
      }
      this.nc = nc;
      this.up = true;
      this.logger.log(`NATS connected to ${nc.getServer()}`);
      void this.follow(nc);
      this.notifyAll(nc, 'connect');
    } catch (error) {
      if (!(error instanceof DialCancelled) && !this.stopping) {
        this.logger.error(
          `NATS connection to ${this.settings.natsUrl} failed: ${errorMessage(error)}`,
        );
      }
    } finally {
      clearTimeout(warning);
    }
  }

  /** Follows the connection's status; dials again should it ever close by itself. */
  private async follow(nc: NatsConnection): Promise<void> {
    const closed = nc.closed();
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) {
        if (this.up) this.logger.warn('NATS disconnected; reconnecting');
        this.up = false;
      } else if (status.type === Events.Reconnect) {
        this.up = true;
        this.logger.log(`NATS reconnected to ${nc.getServer()}`);
        this.notifyAll(nc, 'reconnect');
      }
    }
    const error = await closed;
    if (this.nc !== nc) return;
    this.up = false;
    if (this.stopping) return;
    this.logger.error(
      `NATS connection closed${error ? `: ${errorMessage(error)}` : ''}; dialling again`,
    );
    this.nc = undefined;
    this.redialTimer = setTimeout(() => {
      if (!this.stopping) this.dialing = this.dial();
    }, REDIAL_AFTER_MS);
  }

  private notifyAll(nc: NatsConnection, event: NatsUpEvent): void {
    for (const listener of [...this.listeners]) this.notify(listener, nc, event);
  }

  private notify(listener: NatsUpListener, nc: NatsConnection, event: NatsUpEvent): void {
    try {
      listener(nc, event);
    } catch (error) {
      this.logger.error(`NATS ${event} listener failed: ${errorMessage(error)}`);
    }
  }
}
