import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { monotonicNow, type Clock } from './monotonic';

/** What an HTTP/2 client with prior knowledge sends first (RFC 9113, 3.4). */
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

type ConnectionListener = (this: Server, socket: Socket) => void;

/** Where connections that open with the preface go (H2cSessions). */
export interface H2Adopter {
  /** Serves `socket` as h2c; `acceptedAt` (`now`'s time) starts its deadlines. */
  adopt(socket: Socket, acceptedAt: number): void;
}

/**
 * Serves HTTP/1.1 and prior-knowledge HTTP/2 (h2c) on the HTTP/1.1 server's port: a new
 * connection's first bytes are read before either server sees it; the HTTP/2 preface hands the
 * connection to `h2`, anything else to the HTTP/1.1 server, the bytes read put back in front. The
 * listening server stays the HTTP/1.1 one, so its connection cap and `close` cover both protocols.
 * It costs each connection (not each request) one read before its parser takes over.
 */
export class PrefaceRouter {
  /** Connections whose protocol is not known yet. */
  private readonly undecided = new Set<Socket>();
  private readonly http1: ConnectionListener[];

  /**
   * A connection that has not sent enough to tell its protocol within `timeoutMs` of its
   * acceptance is closed: a deadline, which bytes trickling in do not push back.
   */
  constructor(
    private readonly server: Server,
    private readonly h2: H2Adopter,
    private readonly timeoutMs: number,
    private readonly now: Clock = monotonicNow,
  ) {
    this.http1 = server.listeners('connection') as ConnectionListener[];
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => this.accepted(socket));
  }

  /** SIGTERM: connections that have not said what they are get no answer; idle ones close too. */
  closeUndecided(): void {
    for (const socket of this.undecided) socket.destroy();
  }

  private accepted(socket: Socket): void {
    this.undecided.add(socket);
    const acceptedAt = this.now();
    let received: Buffer | undefined;
    const onData = (chunk: Buffer): void => {
      received = received === undefined ? chunk : Buffer.concat([received, chunk]);
      const h2 = startsLikePreface(received);
      if (h2 && received.length < H2_PREFACE.length) return;
      forget();
      // Paused, so that the bytes put back wait for the parser that takes the connection.
      socket.pause();
      socket.unshift(received);
      if (h2) {
        // The HTTP/1.1 server accepts half-open connections (it ends them itself); an HTTP/2
        // session only learns that its client left when the socket closes at the client's FIN.
        socket.allowHalfOpen = false;
        // The session reads the bytes put back itself (Node's Http2Session does, for sockets
        // that already hold data).
        this.h2.adopt(socket, acceptedAt);
        return;
      }
      for (const listener of this.http1) listener.call(this.server, socket);
      socket.resume();
    };
    // Not the socket's idle timeout, which every byte re-arms: a preface sent a byte every
    // second would hold the connection 24 timeouts long.
    const deadline = setTimeout(() => socket.destroy(), this.timeoutMs);
    // Errors before a parser has the connection (a reset) only end it.
    const onError = (): void => undefined;
    const forget = (): void => {
      this.undecided.delete(socket);
      clearTimeout(deadline);
      socket.removeListener('data', onData);
      socket.removeListener('error', onError);
      socket.removeListener('close', forget);
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', forget);
  }
}

/** Whether `bytes` agree with the HTTP/2 preface as far as either goes. */
function startsLikePreface(bytes: Buffer): boolean {
  const length = Math.min(bytes.length, H2_PREFACE.length);
  return bytes.compare(H2_PREFACE, 0, length, 0, length) === 0;
}
