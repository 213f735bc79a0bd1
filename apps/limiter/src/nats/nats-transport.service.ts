import { natsSubjects } from '@app/contracts';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { NatsLink, type NatsLinkState } from '@app/nats-connection';
import { Server, type CustomTransportStrategy } from '@nestjs/microservices';
import type { Msg, NatsConnection, NatsError, Subscription } from 'nats';
import { LimiterService } from '../engine-host/limiter.service';
import { ReadinessService } from '../engine-host/readiness.service';
import type { TransportDrained } from '../engine-host/shutting-down';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';
import { EnvelopePath } from './envelope-path';
import { natsHandlers, type NatsHandler } from './nats-handlers';
import { NatsRequestsService } from './nats-requests.service';
import { NatsResponder } from './nats-responder';
import { ReplyGuard } from './reply-guard';

/** After the drain deadline, the connection's drain still gets this long to flush the last replies. */
const LAST_FLUSH_MS = 500;

/**
 * The limiter's Nest transport strategy for NATS (app.ts connects it as a microservice): one
 * callback subscription per subject in the queue group, each routed to its operation. The
 * contract's plain JSON goes straight to NatsRequestsService (the fast path: no RxJS pipeline per
 * message); a Nest ClientProxy's envelope `{ pattern, data, id }` goes through the Nest handler
 * its controller declares (NatsLimiterController) and is answered in Nest's reply form
 * (EnvelopePath). Subjects come from the configured prefix, so patterns are operation names.
 *
 * Lifecycle: the limiter starts without NATS and, once Nest has started the microservice and
 * bootstrapped the app (state restored), a NatsLink connects in the background, forever,
 * with backoff (failures logged once with their reason); once connected, nats.js reconnects by
 * itself and resends the subscriptions. ReadinessService.nats follows the link's state.
 *
 * Shutdown: when the limiter drains (at SIGTERM) this stops taking requests (unsubscribes, so the
 * queue group routes new ones to other replicas; messages already delivered are answered
 * UNAVAILABLE) as the limiter answers every waiter; then beforeApplicationShutdown, which Nest
 * runs after every onModuleDestroy, publishes those replies and drains the connection, by the
 * limiter's drain deadline (DRAIN_TIMEOUT_MS after SIGTERM): a reply still owed then is answered
 * UNAVAILABLE.
 */
@Injectable()
export class NatsTransport
  extends Server
  implements
    CustomTransportStrategy,
    OnApplicationBootstrap,
    OnModuleDestroy,
    BeforeApplicationShutdown
{
  protected override readonly logger = new Logger('NatsTransport');
  private readonly responder: NatsResponder;
  private readonly handlers: NatsHandler[];
  // Patterns are plain operation names: looked up as they are (Nest's getHandlerByPattern tries
  // JSON.parse on each first, which throws for a plain name: an exception per message).
  private readonly envelopes: EnvelopePath;
  /** Nest asked the strategy to listen; the app has bootstrapped. Serving needs both. */
  private listening = false;
  private bootstrapped = false;
  private readonly link: NatsLink | undefined;
  private connection: NatsConnection | undefined;
  private subscriptions: Subscription[] = [];
  /** Epoch ms by which shutdown must be done: the limiter's drain deadline. */
  private deadline = 0;
  private readonly connectionListeners: ((nc: NatsConnection) => void)[] = [];
  /** For the shutdown line: replies owed when the drain began, and those cut at its deadline. */
  private owedAtDrain = 0;
  private cut = 0;

  constructor(
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
    private readonly readiness: ReadinessService,
    private readonly limiter: LimiterService,
    requests: NatsRequestsService,
  ) {
    super();
    this.responder = new NatsResponder(
      ReplyGuard.forRequests(settings.subjectPrefix, settings.nats?.inboxPrefix),
    );
    this.envelopes = new EnvelopePath(
      this.responder,
      (pattern) => this.messageHandlers.get(pattern) ?? null,
    );
    this.handlers = natsHandlers(natsSubjects(settings.subjectPrefix), requests);
    this.link =
      settings.nats &&
      new NatsLink(
        settings.nats,
        {
          up: (nc, event) => (event === 'connect' ? this.serve(nc) : this.subscribed()),
          changed: (state, reason) => this.follow(state, reason),
        },
        this.logger,
      );
    limiter.onDrain(() => this.stopTaking());
  }

  /** Requests refused for the subject they asked their answer on (ReplyGuard). */
  get refusedReplies(): number {
    return this.responder.guard.refused;
  }

  /**
   * The control plane shares this connection rather than opening its own: it is told of every new
   * one (nats.js reconnects keep the same connection object; a fresh one follows a close).
   */
  onConnection(listener: (nc: NatsConnection) => void): void {
    this.connectionListeners.push(listener);
    if (this.connection !== undefined && !this.connection.isClosed()) listener(this.connection);
  }

  /**
   * Nest's microservice start (startAllMicroservices): the controller's patterns are registered
   * by now; each operation must have its handler, or the limiter does not start.
   */
  listen(callback: (error?: unknown) => void): void {
    const missing = this.handlers.filter((h) => this.getHandlerByPattern(h.operation) === null);
    if (missing.length > 0) {
      callback(new Error(`no @MessagePattern for ${missing.map((h) => h.operation).join(', ')}`));
      return;
    }
    this.listening = true;
    this.startServing();
    callback();
  }

  onApplicationBootstrap(): void {
    this.bootstrapped = true;
    this.startServing();
  }

  /** After the app's shutdown hooks (which drained and closed it): a no-op then. */
  async close(): Promise<void> {
    await this.link?.close(LAST_FLUSH_MS);
  }

  /** The connection while it is up (Nest's `unwrap`). */
  unwrap<T>(): T {
    if (this.connection === undefined) throw new Error('NATS is not connected');
    return this.connection as T;
  }

  /** Status events go to onConnection listeners and readiness, not Nest's event emitter. */
  on(): never {
    throw new Error('NatsTransport has no events; use onConnection');
  }

  /** Serving starts once Nest listens and the app has bootstrapped (restored usage included). */
  private startServing(): void {
    if (!this.listening || !this.bootstrapped) return;
    if (this.link === undefined) this.readiness.nats = 'disabled';
    else this.link.start();
  }

  /** The drain starts at the signal (main.ts); this is for a close without one. */
  onModuleDestroy(): void {
    this.deadline = this.limiter.drain();
  }

  /** The limiter drains: no more requests from the queue group (it routes them elsewhere). */
  private stopTaking(): void {
    this.owedAtDrain = this.responder.owedCount;
    this.link?.stop();
    if (this.connection === undefined || this.connection.isClosed()) return;
    for (const sub of this.subscriptions) {
      sub.drain().catch(() => undefined); // the connection drain below settles it either way
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    const left = (): number => Math.max(0, this.deadline - Date.now());
    this.link?.stop();
    await this.responder.settled(left());
    // Still owed at the deadline (a store call that hangs, say): UNAVAILABLE, once each.
    this.cut = this.responder.owedCount;
    this.responder.answerOwed();
    // The replies just published need a moment to leave even when the deadline has come.
    await this.link?.close(Math.max(left(), LAST_FLUSH_MS));
    this.readiness.nats = this.link === undefined ? 'disabled' : 'closed';
  }

  /** What the drain did with the replies owed (waiting acquires). */
  get drained(): TransportDrained {
    return { inFlight: this.owedAtDrain, cut: this.cut };
  }

  private serve(nc: NatsConnection): void {
    this.connection = nc;
    const queue = this.settings.queueGroup;
    this.subscriptions = this.handlers.map((handler) =>
      nc.subscribe(handler.subject, { queue, callback: this.callback(handler) }),
    );
    for (const listener of this.connectionListeners) {
      try {
        listener(nc);
      } catch (error) {
        this.logger.error(`connection listener failed: ${describe(error)}`);
      }
    }
    // Subscribed once the server has seen the SUBs: a round trip behind them.
    nc.flush().then(
      () => {
        if (this.connection === nc && this.link?.state === 'connected') this.subscribed();
      },
      () => undefined, // disconnected meanwhile: the link reports it
    );
    this.logger.log(`serving ${this.settings.subjectPrefix}.* on NATS`);
  }

  /** Plain JSON straight to the operation; a Nest envelope (rare bytes up front) through Nest. */
  private callback(handler: NatsHandler): (error: NatsError | null, msg: Msg) => void {
    const plain = this.responder.callback(handler.handle, handler.shuttingDown);
    return (error, msg) => {
      if (error === null && this.envelopes.served(handler, msg)) return;
      plain(error, msg);
    };
  }

  private subscribed(): void {
    this.readiness.nats = 'subscribed';
    this.readiness.natsError = undefined;
  }

  /** Mirrors the link's state into readiness (`subscribed` is set once the SUBs are in). */
  private follow(state: NatsLinkState, reason: string | undefined): void {
    this.readiness.natsError = reason;
    if (state === 'connected') return;
    this.readiness.nats = state;
    if (state === 'closed') {
      this.connection = undefined;
      this.subscriptions = [];
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
