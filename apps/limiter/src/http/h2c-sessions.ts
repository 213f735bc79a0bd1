import { ThrottledLog } from '@app/logging';
import type { Server } from 'node:http';
import {
  constants,
  createServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from 'node:http2';
import type { Socket } from 'node:net';
import { answerStreamRefusal } from './http-errors';
import {
  H2_MAX_CONCURRENT_STREAMS,
  H2_MAX_HEADER_LIST_PAIRS,
  H2_MAX_SESSION_MEMORY_MB,
  H2_MAX_UNREAD_BYTES,
  H2_MAX_UNREAD_TOTAL_BYTES,
  MAX_HEADER_BYTES,
  TIMEOUT_CHECK_MS,
} from './http-limits';
import { monotonicNow, type Clock } from './monotonic';
import { UnreadAnswers, unreadCountingResponse, UnreadTotal } from './unread-answers';

/** What a session holds: its requests in flight, since when it has had none, unread answers. */
interface SessionState {
  readonly inFlight: Set<Http2ServerResponse>;
  /** When a request last arrived or finished (or the connection was accepted). */
  lastActiveAt: number;
  /** Whether any request has arrived on it. */
  served: boolean;
  readonly unread: UnreadAnswers;
}

export interface H2cBounds {
  /** HTTP_REQUEST_TIMEOUT_MS. */
  readonly requestTimeoutMs: number;
  /** How long a session that has served requests may sit with none in flight. */
  readonly idleTimeoutMs: number;
  /** What all sessions may hold in unread answers (H2_MAX_UNREAD_TOTAL_BYTES unless a test says). */
  readonly maxUnreadTotalBytes?: number;
}

// A client that never reads can cause these at will.
const stalls = new ThrottledLog('LimiterHttp', 'http.stalled', 'warn');

/** Raw bytes outside printable ASCII: not a path HTTP/1.1's parser would take. */
const NOT_A_PATH = /[^\x21-\x7e]/;

/**
 * The HTTP/2 (h2c) side of the limiter's port (docs/operations.md, "HTTP clients"). Requests are
 * handed to the HTTP/1.1 server's 'request' listeners (Fastify's routing, X-Correlation-ID, the
 * in-flight accounting), so both protocols answer alike; what differs is bounded here, the way
 * HttpServerService bounds HTTP/1.1 connections:
 * - settings: at most H2_MAX_CONCURRENT_STREAMS streams, 16 KiB of headers, bounded memory;
 * - a request's headers and body must arrive within `requestTimeoutMs` (408, the stream ends);
 * - a session with nothing in flight for `idleTimeoutMs` (KEEP_ALIVE_TIMEOUT_MS) is closed
 *   (GOAWAY), one that has not sent a request within `requestTimeoutMs` of its connection's
 *   acceptance too, as an HTTP/1.1 connection that sends none is (this also ends sessions Node's
 *   HTTP/2 keeps open after it answered a protocol error with GOAWAY);
 * - answers not yet taken by the client (UnreadAnswers) are bounded: an answer that would take a
 *   session past H2_MAX_UNREAD_BYTES, or all of them past H2_MAX_UNREAD_TOTAL_BYTES, resets its
 *   stream (nghttp2 already refuses new streams while
 *   a session holds more than its 1 MB, queued answers included; the streams opened before then
 *   are what this bounds); a session whose unread answers have not moved for `requestTimeoutMs`
 *   is sent GOAWAY and destroyed, whatever else it sends (PINGs) or awaits;
 * - at SIGTERM every session gets a GOAWAY (its streams finish, no new ones), and at the drain
 *   deadline what is left is destroyed.
 * A request costs a set entry and a 'close' listener, a write a callback; a session, a map entry;
 * a check every TIMEOUT_CHECK_MS walks the sessions (at most HTTP_MAX_CONNECTIONS) and the
 * overdue bodies. Time is `now`, monotonic: a step of the wall clock neither pauses nor hastens
 * any bound.
 */
export class H2cSessions {
  readonly server: Http2Server;
  private readonly sessions = new Map<ServerHttp2Session, SessionState>();
  /** Requests whose body is still arriving, in arrival order (so oldest first), with that instant. */
  private readonly receiving = new Map<Http2ServerResponse, number>();
  private readonly checks: NodeJS.Timeout;
  /** Unread answers of every session. */
  private readonly unreadTotal: UnreadTotal;
  private draining = false;
  /** When the connection being handed over (`adopt`) was accepted. */
  private acceptedAt: number | undefined;

  constructor(
    private readonly http1: Server,
    private readonly bounds: H2cBounds,
    private readonly now: Clock = monotonicNow,
  ) {
    this.unreadTotal = new UnreadTotal(bounds.maxUnreadTotalBytes ?? H2_MAX_UNREAD_TOTAL_BYTES);
    this.server = createServer({
      settings: {
        maxConcurrentStreams: H2_MAX_CONCURRENT_STREAMS,
        maxHeaderListSize: MAX_HEADER_BYTES,
        enablePush: false,
      },
      maxHeaderListPairs: H2_MAX_HEADER_LIST_PAIRS,
      maxSessionMemory: H2_MAX_SESSION_MEMORY_MB,
      Http2ServerResponse: unreadCountingResponse(
        (session) => this.sessions.get(session)?.unread,
        H2_MAX_UNREAD_BYTES,
        now,
      ),
    });
    this.server.on('session', (session: ServerHttp2Session) => this.opened(session));
    this.server.on('request', (request: Http2ServerRequest, response: Http2ServerResponse) =>
      this.arrived(request, response),
    );
    this.checks = setInterval(() => this.check(this.now()), TIMEOUT_CHECK_MS).unref();
  }

  /**
   * Serves `socket` (its preface read) as h2c. Its first request is due within the request
   * timeout of `acceptedAt` (`now`'s time), the deadline its preface was already given.
   */
  adopt(socket: Socket, acceptedAt: number): void {
    // Node opens the session within the 'connection' event.
    this.acceptedAt = acceptedAt;
    try {
      this.server.emit('connection', socket);
    } finally {
      this.acceptedAt = undefined;
    }
  }

  /** SIGTERM, first step: every session is told GOAWAY; streams already open are answered. */
  goAway(): void {
    this.draining = true;
    for (const session of this.sessions.keys()) session.close();
  }

  /** At the drain deadline: whatever is still open is cut. */
  destroy(): void {
    clearInterval(this.checks);
    for (const session of this.sessions.keys()) session.destroy();
  }

  private opened(session: ServerHttp2Session): void {
    const now = this.now();
    const state: SessionState = {
      inFlight: new Set(),
      lastActiveAt: this.acceptedAt ?? now,
      served: false,
      unread: new UnreadAnswers(now, this.unreadTotal),
    };
    this.sessions.set(session, state);
    session.once('close', () => this.sessions.delete(session));
    // Fires once no byte has moved either way for the timeout (Node re-arms it on activity).
    session.on('timeout', () => this.quiet(session, state));
    session.setTimeout(this.bounds.requestTimeoutMs);
    if (this.draining) session.close();
  }

  private arrived(request: Http2ServerRequest, response: Http2ServerResponse): void {
    const state = this.sessions.get(request.stream.session as ServerHttp2Session);
    if (state === undefined) {
      // Its session has already closed: nobody will read the answer.
      request.stream.close();
      return;
    }
    state.inFlight.add(response);
    state.lastActiveAt = this.now();
    state.served = true;
    response.once('close', () => {
      state.inFlight.delete(response);
      state.lastActiveAt = this.now();
      this.receiving.delete(response);
    });
    // HTTP/1.1's parser refuses such a path before any route runs; so does this side.
    if (NOT_A_PATH.test(request.url)) return answerStreamRefusal(response, 'HPE_INVALID_URL');
    if (!request.stream.endAfterHeaders) {
      this.receiving.set(response, state.lastActiveAt);
      // HTTP/2 sends a body without its length when it likes; Fastify reads one only when
      // content-length or transfer-encoding announces it (else the handler gets none), so the
      // body is announced as HTTP/1.1 would announce one of unknown length.
      if (request.headers['content-length'] === undefined) {
        request.headers['transfer-encoding'] = 'chunked';
      }
    }
    this.http1.emit('request', request, response);
  }

  /**
   * No byte moved for the request timeout: answers written and not taken mean a client that does
   * not read, so the session goes; requests awaiting their answer (a waiting acquire) keep it.
   */
  private quiet(session: ServerHttp2Session, state: SessionState): void {
    for (const response of state.inFlight) {
      if (response.writableEnded) {
        session.destroy();
        return;
      }
    }
  }

  private check(now: number): void {
    for (const [response, arrivedAt] of this.receiving) {
      if (!response.req.complete) {
        if (now - arrivedAt < this.bounds.requestTimeoutMs) break;
        answerStreamRefusal(response, 'ERR_HTTP_REQUEST_TIMEOUT');
        // The client may still be sending: the stream ends here, the session goes on.
        response.stream.close();
      }
      this.receiving.delete(response);
    }
    for (const [session, state] of this.sessions) {
      if (state.unread.stalled(now, this.bounds.requestTimeoutMs)) {
        this.cut(session, state.unread);
        continue;
      }
      if (state.inFlight.size > 0) continue;
      const limit = state.served ? this.bounds.idleTimeoutMs : this.bounds.requestTimeoutMs;
      if (now - state.lastActiveAt >= limit) session.close();
    }
  }

  /** Answers not taken for the request timeout: GOAWAY, and the session and its streams go. */
  private cut(session: ServerHttp2Session, unread: UnreadAnswers): void {
    stalls.write(() => ({
      msg: `h2c connection closed: its client took no answer for ${this.bounds.requestTimeoutMs} ms`,
      client: session.socket?.remoteAddress,
      unreadBytes: unread.bytes,
    }));
    session.destroy(new Error('answers not taken'), constants.NGHTTP2_ENHANCE_YOUR_CALM);
  }
}
