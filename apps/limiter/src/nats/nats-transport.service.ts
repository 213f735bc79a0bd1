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
import type { NatsConnection, Subscription } from 'nats';
import { LimiterService } from '../engine-host/limiter.service';
import { ReadinessService } from '../engine-host/readiness.service';
import type { TransportDrained } from '../engine-host/shutting-down';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';
import { natsHandlers, type NatsHandler } from './nats-handlers';
import { NatsRequestsService } from './nats-requests.service';
import { NatsResponder } from './nats-responder';

/** After the drain deadline, the connection's drain still gets this long to flush the last replies. */
const LAST_FLUSH_MS = 500;

/**
 * Serves the request-reply subjects with the nats.js client directly: one callback subscription per
 * subject in the queue group. NestJS's NATS microservice transport would add an RxJS pipeline, a
 * pattern lookup and its own envelope ({ pattern, data, id }) per message, which neither the
 * contract's plain JSON payloads nor the throughput goal can afford.
 *
 * Lifecycle: the limiter starts without NATS and a NatsLink connects in the background, forever,
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
  implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown
{
  private readonly logger = new Logger('NatsTransport');
  private readonly responder = new NatsResponder();
  private readonly handlers: NatsHandler[];
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

  /**
   * The control plane shares this connection rather than opening its own: it is told of every new
   * one (nats.js reconnects keep the same connection object; a fresh one follows a close).
   */
  onConnection(listener: (nc: NatsConnection) => void): void {
    this.connectionListeners.push(listener);
    if (this.connection !== undefined && !this.connection.isClosed()) listener(this.connection);
  }

  onApplicationBootstrap(): void {
    if (this.link === undefined) {
      this.readiness.nats = 'disabled';
      return;
    }
    this.link.start();
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
    this.subscriptions = this.handlers.map(({ subject, handle, shuttingDown }) =>
      nc.subscribe(subject, { queue, callback: this.responder.callback(handle, shuttingDown) }),
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
