import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { Socket } from 'node:net';
import { ANSWER_BEFORE_DEADLINE_MS } from './http-limits';
import { monotonicNow } from './monotonic';
import type { TransportDrained } from '../engine-host/shutting-down';
import { answerShuttingDown, type AnyResponse } from './shutting-down';

/**
 * The requests the HTTP server is serving, so that it can tell a connection awaiting its answer
 * (a waiting acquire, legitimately silent for up to a queue's maxWaitMs) from an idle or stuck
 * one, and so that shutdown can answer and close every connection by a deadline whatever the
 * clients do. Costs each request a set entry and one 'close' listener. HTTP/2 requests arrive
 * here too (H2cSessions hands them to the same 'request' listeners); their sessions' own bounds
 * and GOAWAY are H2cSessions'.
 */
export class InFlightRequests {
  private readonly open = new Set<AnyResponse>();
  /** The latest request of each connection. */
  private readonly latest = new WeakMap<Socket, ServerResponse>();
  private draining = false;
  private emptied: (() => void) | undefined;
  private inFlightAtDrain = 0;
  private cut = 0;

  constructor(private readonly server: Server) {
    server.prependListener(
      'request',
      (request: IncomingMessage | Http2ServerRequest, response: AnyResponse) => {
        this.arrived(request, response);
      },
    );
  }

  /**
   * Called when a connection has seen no bytes either way for the server's timeout. Closed once
   * its latest answer is written: a client that does not read it, or an idle keep-alive
   * connection. Kept while a request awaits its answer (a waiting acquire), and while one is still
   * arriving: Node's request timeout answers that one 408.
   */
  idle(socket: Socket): void {
    if (this.latest.get(socket)?.writableEnded === true) socket.destroy();
  }

  /**
   * SIGTERM, first step: no new connections; idle ones close now; every answer from here on
   * closes its connection (`Connection: close`), so keep-alive clients go elsewhere.
   */
  stopAccepting(): void {
    this.draining = true;
    this.inFlightAtDrain = this.open.size;
    for (const response of this.open) {
      if (!response.headersSent) closeAfter(response);
    }
    this.server.close(); // also closes idle keep-alive connections (Node >= 19)
  }

  /**
   * SIGTERM, second step: waits for the requests in flight (the limiter has already answered
   * its waiters); shortly before `deadline` (monotonicNow's time) answers whatever is left 503
   * in its route's shape (a body still arriving, say); at `deadline` closes every connection
   * that is still open.
   */
  async settle(deadline: number): Promise<void> {
    await this.emptyBy(deadline - ANSWER_BEFORE_DEADLINE_MS);
    this.cut = this.open.size;
    for (const response of this.open) answerShuttingDown(response);
    await this.emptyBy(deadline);
    this.server.closeAllConnections();
  }

  get drained(): TransportDrained {
    return { inFlight: this.inFlightAtDrain, cut: this.cut };
  }

  private arrived(request: IncomingMessage | Http2ServerRequest, response: AnyResponse): void {
    this.open.add(response);
    // An HTTP/2 stream is not a connection; its session's timeouts are H2cSessions'.
    if (request.httpVersionMajor === 1) {
      this.latest.set(request.socket, response as ServerResponse);
    }
    if (this.draining) closeAfter(response);
    response.once('close', () => {
      this.open.delete(response);
      if (this.open.size === 0) this.emptied?.();
    });
  }

  /** Resolves once no request is in flight, or at `instant` (monotonicNow's time). */
  private emptyBy(instant: number): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.emptied = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, instant - monotonicNow()));
      this.emptied = done;
    });
  }
}

/** The answer closes its HTTP/1.1 connection (`Connection: close`); HTTP/2 has GOAWAY instead. */
function closeAfter(response: AnyResponse): void {
  if ('shouldKeepAlive' in response) response.shouldKeepAlive = false;
}
