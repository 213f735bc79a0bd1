import { natsSubjects } from '@app/contracts';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import {
  connect,
  Events,
  type ConnectionOptions,
  type NatsConnection,
  type Subscription,
} from 'nats';
import { finishesWithin } from '../engine-host/deadline';
import { LimiterService } from '../engine-host/limiter.service';
import { ReadinessService } from '../engine-host/readiness.service';
import type { TransportDrained } from '../engine-host/shutting-down';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';
import { natsHandlers, type NatsHandler } from './nats-handlers';
import { NatsRequestsService } from './nats-requests.service';
import { NatsResponder } from './nats-responder';

/** First-connect retries back off from this delay... */
const FIRST_RETRY_MS = 100;
/** ...up to this one, so a NATS server that comes up is found within about this long. */
const MAX_RETRY_MS = 2_000;
/** nats.js retries a lost server this often (plus jitter), forever. */
const RECONNECT_WAIT_MS = 500;
const RECONNECT_JITTER_MS = 250;
/** After the drain deadline, the connection's drain still gets this long to flush the last replies. */
const LAST_FLUSH_MS = 500;

/**
 * Serves the request-reply subjects with the nats.js client directly: one callback subscription per
 * subject in the queue group. NestJS's NATS microservice transport would add an RxJS pipeline, a
 * pattern lookup and its own envelope ({ pattern, data, id }) per message, which neither the
 * contract's plain JSON payloads nor the throughput goal can afford.
 *
 * Lifecycle: the limiter starts without NATS and connects in the background, forever, with
 * backoff; once connected, nats.js reconnects by itself (`maxReconnectAttempts: -1`) and resends
 * the subscriptions. The first connection is retried here rather than with nats.js's
 * `waitOnFirstConnect`, because that dial loop cannot be cancelled: a limiter shut down while NATS
 * is unreachable would keep retrying. ReadinessService.nats follows the connection's status.
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
  private connection: NatsConnection | undefined;
  private subscriptions: Subscription[] = [];
  private connecting: Promise<void> | undefined;
  private stopping = false;
  private wakeRetry: (() => void) | undefined;
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
    if (this.settings.natsUrl === '') {
      this.readiness.nats = 'disabled';
      return;
    }
    this.connecting = this.connectUntilStopped();
  }

  /** The drain starts at the signal (main.ts); this is for a close without one. */
  onModuleDestroy(): void {
    this.deadline = this.limiter.drain();
  }

  /** The limiter drains: no more requests from the queue group (it routes them elsewhere). */
  private stopTaking(): void {
    this.stopping = true;
    this.owedAtDrain = this.responder.owedCount;
    this.wakeRetry?.();
    if (this.connection === undefined || this.connection.isClosed()) return;
    for (const sub of this.subscriptions) {
      sub.drain().catch(() => undefined); // the connection drain below settles it either way
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.wakeRetry?.();
    const left = (): number => Math.max(0, this.deadline - Date.now());
    await finishesWithin(this.connecting ?? Promise.resolve(), left());
    await this.responder.settled(left());
    // Still owed at the deadline (a store call that hangs, say): UNAVAILABLE, once each.
    this.cut = this.responder.owedCount;
    this.responder.answerOwed();
    const nc = this.connection;
    if (nc !== undefined && !nc.isClosed()) {
      const drained = nc.isDraining() ? nc.closed() : nc.drain().catch(() => undefined);
      // The replies just published need a moment to leave even when the deadline has come.
      if (!(await finishesWithin(drained, Math.max(left(), LAST_FLUSH_MS)))) await nc.close();
    }
    this.readiness.nats = this.settings.natsUrl === '' ? 'disabled' : 'closed';
  }

  /** What the drain did with the replies owed (waiting acquires). */
  get drained(): TransportDrained {
    return { inFlight: this.owedAtDrain, cut: this.cut };
  }

  private async connectUntilStopped(): Promise<void> {
    let retryMs = FIRST_RETRY_MS;
    let failures = 0;
    while (!this.stopping) {
      this.readiness.nats = 'connecting';
      try {
        const nc = await connect(this.connectionOptions());
        if (this.stopping) {
          await nc.close();
          return;
        }
        this.serve(nc);
        return;
      } catch (error) {
        // Once, then every ~minute: an unreachable NATS is a state, not a stream of errors.
        if (failures++ % 30 === 0) {
          this.logger.warn(`NATS unreachable at ${this.settings.natsUrl}: ${describe(error)}`);
        }
      }
      await this.pause(retryMs);
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    }
  }

  private connectionOptions(): ConnectionOptions {
    return {
      servers: this.settings.natsUrl.split(',').map((url) => url.trim()),
      name: 'ratelimit-limiter',
      maxReconnectAttempts: -1,
      reconnectTimeWait: RECONNECT_WAIT_MS,
      reconnectJitter: RECONNECT_JITTER_MS,
    };
  }

  private serve(nc: NatsConnection): void {
    this.connection = nc;
    const queue = this.settings.queueGroup;
    this.subscriptions = this.handlers.map(({ subject, handle, shuttingDown }) =>
      nc.subscribe(subject, { queue, callback: this.responder.callback(handle, shuttingDown) }),
    );
    void this.follow(nc);
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
        if (this.readiness.nats === 'connecting') this.readiness.nats = 'subscribed';
      },
      () => undefined, // disconnected meanwhile: follow() reports it
    );
    this.logger.log(
      `NATS connected to ${nc.getServer()}, serving ${this.settings.subjectPrefix}.*`,
    );
  }

  /** Mirrors the connection's status into readiness; reconnects from scratch if it ever closes. */
  private async follow(nc: NatsConnection): Promise<void> {
    const closed: Promise<void | Error> = nc.closed();
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) {
        this.readiness.nats = 'disconnected';
        this.logger.warn('NATS disconnected; reconnecting');
      } else if (status.type === Events.Reconnect) {
        this.readiness.nats = 'subscribed';
        this.logger.log(`NATS reconnected to ${nc.getServer()}`);
      }
    }
    const error = await closed;
    if (this.connection === nc) {
      this.connection = undefined;
      this.subscriptions = [];
    }
    this.readiness.nats = 'closed';
    if (!this.stopping) {
      this.logger.error(
        `NATS connection closed${error ? `: ${describe(error)}` : ''}; reconnecting`,
      );
      this.connecting = this.connectUntilStopped();
    }
  }

  /** A retry delay that shutdown can cut short. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeRetry = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => (this.wakeRetry = undefined));
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
