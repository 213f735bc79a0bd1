/**
 * HTTP over a bare TCP socket, for tests that need what fetch never does: a body sent a byte at a
 * time, bytes a URL may not hold, a connection that sends nothing. Every wait is bounded.
 */
import { connect, type Socket } from 'node:net';

export interface RawConnection {
  readonly socket: Socket;
  /** Everything received so far, as latin1 (byte for byte). */
  received(): string;
  /** Resolves when the server has closed the connection (or it failed). */
  readonly closed: Promise<void>;
  /** Resolves with the first whole response, or undefined if the connection closes first. */
  readonly answered: Promise<RawResponse | undefined>;
  /** Writes more of the request; false once the connection is gone. */
  write(bytes: string | Buffer): boolean;
  /** Sends one more byte of `fill` every `everyMs` until closed. */
  trickle(everyMs: number, fill?: string): void;
  destroy(): void;
}

/** Opens a connection to 127.0.0.1:`port` and sends `head` (latin1, so `\xff` is one byte). */
export function openRaw(port: number, head = ''): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    let timer: NodeJS.Timeout | undefined;
    let answer: (response: RawResponse | undefined) => void = () => undefined;
    const answered = new Promise<RawResponse | undefined>((done) => (answer = done));
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('latin1');
      const response = parseResponse(data);
      if (response !== undefined) answer(response);
    });
    const closed = new Promise<void>((done) => {
      socket.once('close', () => {
        clearInterval(timer);
        answer(parseResponse(data));
        done();
      });
    });
    // A reset after the server's answer is an expected end here, not a failure.
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      if (head !== '') socket.write(Buffer.from(head, 'latin1'));
      resolve({
        socket,
        received: () => data,
        closed,
        answered,
        write: (bytes) =>
          !socket.destroyed &&
          socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes),
        trickle(everyMs, fill = ' ') {
          timer = setInterval(() => {
            if (!socket.destroyed && socket.writable) socket.write(fill);
          }, everyMs);
        },
        destroy: () => {
          clearInterval(timer);
          socket.destroy();
        },
      });
    });
    socket.once('error', reject);
  });
}

/**
 * The head of a request with a body of `length` bytes, to be sent later. It asks for
 * `100 Continue`, which the server sends once it has read the head (see `headRead`).
 */
export function requestHead(method: string, path: string, length: number): string {
  return (
    `${method} ${path} HTTP/1.1\r\nhost: limiter\r\nexpect: 100-continue\r\n` +
    `content-type: application/json\r\ncontent-length: ${length}\r\n\r\n`
  );
}

/** Resolves once the server has read a head sent by `requestHead`: it said `100 Continue`. */
export function headRead(connection: RawConnection, ms = 10_000): Promise<void> {
  return within(
    'the server to read the head',
    ms,
    new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (connection.received().startsWith('HTTP/1.1 100')) resolve();
        else if (connection.socket.destroyed) reject(new Error('closed before 100 Continue'));
        else setTimeout(check, 10);
      };
      check();
    }),
  );
}

/** A whole request with a latin1 `body` (so `\xff` is the byte 0xff). */
export function rawRequest(method: string, path: string, body = ''): string {
  return (
    `${method} ${path} HTTP/1.1\r\nhost: limiter\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body, 'latin1')}\r\n\r\n${body}`
  );
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Parses the first final response in what a connection received (a `100 Continue` before it is
 * skipped); undefined if none is complete.
 */
export function parseResponse(received: string): RawResponse | undefined {
  const text = received.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const bytes = Buffer.from(text.slice(end + 4), 'latin1');
  if (bytes.length < length) return undefined;
  const body = bytes.subarray(0, length).toString('utf8');
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

/** Resolves with `work`, or rejects naming `what` after `ms`. */
export async function within<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
