import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import type { Server } from 'node:http';
import { LimiterService } from '../engine-host/limiter.service';
import type { TransportDrained } from '../engine-host/shutting-down';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';
import { H2cSessions } from './h2c-sessions';
import { KEEP_ALIVE_TIMEOUT_MS, TIMEOUT_CHECK_MS } from './http-limits';
import { InFlightRequests } from './in-flight';
import { monotonicNow } from './monotonic';
import { PrefaceRouter } from './preface-router';

/** A dropped connection is logged at most this often: a flood must not become one of log lines. */
const DROP_LOG_EVERY_MS = 60_000;

/**
 * The HTTP server's bounds and its shutdown (docs/operations.md, "HTTP clients" and "SIGTERM").
 *
 * Bounds: a request's headers and body must arrive within HTTP_REQUEST_TIMEOUT_MS (Node answers
 * 408 and closes); an answer the client does not read for as long closes its connection; an idle
 * keep-alive connection closes after KEEP_ALIVE_TIMEOUT_MS; past HTTP_MAX_CONNECTIONS, new
 * connections are closed at once. None of these cuts a request that awaits its answer: a waiting
 * acquire may take up to its queue's maxWaitMs. Fastify's defaults have no request timeout at all,
 * so a body sent a byte at a time held its connection forever.
 *
 * Both protocols on one port: a connection that opens with the HTTP/2 preface is served as h2c
 * (PrefaceRouter, H2cSessions, whose streams reach the same routes), any other as HTTP/1.1. The
 * connection cap counts both; the h2c sessions have bounds of their own to the same effect.
 *
 * Shutdown: when the limiter drains (at SIGTERM) the server stops accepting, as the limiter
 * answers its waiters; beforeApplicationShutdown waits for the requests in flight until the drain
 * deadline (DRAIN_TIMEOUT_MS after SIGTERM), answering stragglers 503 and closing every connection
 * by then, so that Fastify's close, and the last write of usage after it, never wait on a client.
 * h2c sessions are sent GOAWAY at the signal and destroyed at the deadline.
 */
@Injectable()
export class HttpServerService implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger('LimiterHttp');
  private inFlight: InFlightRequests | undefined;
  private h2c: H2cSessions | undefined;
  private deadline = 0;
  private lastDropLog = -Infinity;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly limiter: LimiterService,
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
  ) {}

  onModuleInit(): void {
    // Absent when the module runs without an HTTP server (a context built for NATS alone).
    const adapter = this.adapterHost.httpAdapter as typeof this.adapterHost.httpAdapter | undefined;
    if (adapter === undefined) return;
    const server = adapter.getInstance<FastifyInstance>().server;
    this.bound(server);
    const timeout = this.settings.httpRequestTimeoutMs;
    const h2c = new H2cSessions(server, {
      requestTimeoutMs: timeout,
      idleTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
    });
    const router = new PrefaceRouter(server, h2c, timeout);
    const inFlight = new InFlightRequests(server);
    server.setTimeout(timeout, (socket) => inFlight.idle(socket));
    this.limiter.onDrain(() => {
      inFlight.stopAccepting();
      router.closeUndecided();
      h2c.goAway();
    });
    this.inFlight = inFlight;
    this.h2c = h2c;
  }

  /** The drain starts at the signal (main.ts); this is for a close without one. */
  onModuleDestroy(): void {
    // The drain's deadline (epoch ms) as a monotonic instant: a clock step must not move it.
    this.deadline = monotonicNow() + Math.max(0, this.limiter.drain() - Date.now());
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.inFlight?.settle(this.deadline);
    this.h2c?.destroy();
  }

  /** What the drain did with the requests in flight (none without an HTTP server). */
  get drained(): TransportDrained {
    return this.inFlight?.drained ?? { inFlight: 0, cut: 0 };
  }

  /** Node's bounds; set before the server listens, which is when it starts its checks. */
  private bound(server: Server): void {
    const timeout = this.settings.httpRequestTimeoutMs;
    server.requestTimeout = timeout;
    server.headersTimeout = timeout;
    // Missing from @types/node; Node checks the two timeouts above this often.
    (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
      TIMEOUT_CHECK_MS;
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.maxConnections = this.settings.httpMaxConnections;
    server.on('drop', () => {
      const now = monotonicNow();
      if (now - this.lastDropLog < DROP_LOG_EVERY_MS) return;
      this.lastDropLog = now;
      this.logger.warn(
        `HTTP_MAX_CONNECTIONS (${this.settings.httpMaxConnections}) reached: new connections are closed`,
      );
    });
  }
}
