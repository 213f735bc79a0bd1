import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { NatsLink, type NatsLinkState, type NatsUpEvent } from '@app/nats-connection';
import type { NatsConnection } from 'nats';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import { errorMessage } from './error-message';

/** Shutdown waits at most this long for the drain, then closes. */
const DRAIN_TIMEOUT_MS = 5_000;

export type { NatsUpEvent };
export type NatsUpListener = (nc: NatsConnection, event: NatsUpEvent) => void;
/** `disabled`: NATS_URL is empty. */
export type AdminNatsState = 'disabled' | NatsLinkState;

/**
 * The admin's one NATS connection, kept by a NatsLink (dialled in the background, retried
 * forever, failures logged once with their reason). The admin starts without NATS (changes are
 * stored in SQLite and published later), so connecting never blocks start.
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
  private readonly link: NatsLink | undefined;
  /** For the shutdown line: how the connection ended (undefined: there was none to end). */
  ended: 'drained' | 'closed' | undefined;

  constructor(@Inject(ADMIN_SETTINGS) settings: AdminSettings) {
    this.link =
      settings.nats &&
      new NatsLink(settings.nats, { up: (nc, event) => this.notifyAll(nc, event) }, this.logger);
  }

  /** False when NATS_URL is empty: the admin runs without NATS. */
  get enabled(): boolean {
    return this.link !== undefined;
  }

  /** The connection while it is up; undefined while connecting, disconnected or shut down. */
  get connection(): NatsConnection | undefined {
    return this.link?.connection;
  }

  get isUp(): boolean {
    return this.connection !== undefined;
  }

  get state(): AdminNatsState {
    return this.link?.state ?? 'disabled';
  }

  /** Why NATS is not connected (refused credentials, TLS, unreachable); undefined while up. */
  get lastError(): string | undefined {
    return this.link?.lastError;
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
    if (this.link === undefined) {
      this.logger.log('NATS_URL is empty: running without NATS (changes reach no limiter)');
      return;
    }
    this.link.start();
  }

  onModuleDestroy(): void {
    this.listeners.clear();
    this.link?.stop();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.ended = await this.link?.close(DRAIN_TIMEOUT_MS);
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
