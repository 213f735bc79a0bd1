/**
 * HTTP/2 frames over a bare TCP socket, for tests that need what node:http2's client never sends:
 * more streams than the server allows, header blocks past its limits, endless CONTINUATION frames,
 * streams opened and reset at once. Headers are HPACK literals (no Huffman, no table); what the
 * server sends back is read as frames (type, flags, stream), never decoded. Every wait is bounded.
 */
import { connect, type Socket } from 'node:net';
import { within } from './raw-http';

export const H2_PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

export const FRAME = {
  data: 0x0,
  headers: 0x1,
  rstStream: 0x3,
  settings: 0x4,
  ping: 0x6,
  goaway: 0x7,
  windowUpdate: 0x8,
  continuation: 0x9,
} as const;

export const FLAG = { endStream: 0x1, ack: 0x1, endHeaders: 0x4 } as const;

/** SETTINGS identifiers (RFC 9113, 6.5.2). */
export const SETTING = { initialWindowSize: 0x4 } as const;

/** RST_STREAM and GOAWAY codes (RFC 9113, 7). */
export const H2_ERROR = {
  noError: 0x0,
  protocolError: 0x1,
  refusedStream: 0x7,
  cancel: 0x8,
  enhanceYourCalm: 0xb,
} as const;

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

/** The error code a RST_STREAM or GOAWAY frame carries. */
export function errorCode(frame: Frame): number {
  return frame.payload.readUInt32BE(frame.type === FRAME.goaway ? 4 : 0);
}

export function frame(
  type: number,
  flags: number,
  stream: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an `prefix`-bit prefix, its first byte or'ed with `mask`. */
function hpackInteger(value: number, prefix: number, mask: number): Buffer {
  const max = (1 << prefix) - 1;
  if (value < max) return Buffer.from([mask | value]);
  const bytes = [mask | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([hpackInteger(bytes.length, 7, 0), bytes]);
}

/** A header block of literals without indexing, new names: no state shared with the server. */
export function headerBlock(headers: readonly (readonly [string, string])[]): Buffer {
  return Buffer.concat(
    headers.flatMap(([name, value]) => [Buffer.from([0]), hpackString(name), hpackString(value)]),
  );
}

/** The pseudo-headers of a request for `path` (HTTP `method`), then `extra`. */
export function requestHeaders(
  method: string,
  path: string,
  extra: readonly (readonly [string, string])[] = [],
): (readonly [string, string])[] {
  return [
    [':method', method],
    [':scheme', 'http'],
    [':authority', 'limiter'],
    [':path', path],
    ...extra,
  ];
}

export function headersFrame(
  stream: number,
  headers: readonly (readonly [string, string])[],
  endStream = true,
): Buffer {
  const flags = FLAG.endHeaders | (endStream ? FLAG.endStream : 0);
  return frame(FRAME.headers, flags, stream, headerBlock(headers));
}

export function rstStream(stream: number, code: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code);
  return frame(FRAME.rstStream, 0, stream, payload);
}

export interface RawH2Connection {
  readonly socket: Socket;
  /** Every frame the server sent so far. */
  frames(): Frame[];
  /** Resolves when the server has closed the connection (or it failed). */
  readonly closed: Promise<void>;
  write(bytes: Buffer | string): boolean;
  /** Resolves with the first frame `match` accepts, or rejects after `ms`. */
  frame(what: string, match: (frame: Frame) => boolean, ms?: number): Promise<Frame>;
  destroy(): void;
}

/** A WINDOW_UPDATE frame: `increment` more bytes the server may send on `stream` (0: all). */
export function windowUpdate(stream: number, increment: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(increment);
  return frame(FRAME.windowUpdate, 0, stream, payload);
}

/** A SETTINGS frame carrying `settings` (identifier, value). */
export function settingsFrame(settings: readonly (readonly [number, number])[] = []): Buffer {
  const payload = Buffer.alloc(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return frame(FRAME.settings, 0, 0, payload);
}

/**
 * Opens a connection to 127.0.0.1:`port`, sends the preface and a SETTINGS frame with `settings`
 * (none by default), and acknowledges the server's SETTINGS as they arrive. Resolves once the
 * first is acknowledged: the server's limits hold from then on (RFC 9113, 6.5.3), before it they
 * may not.
 */
export function openRawH2(
  port: number,
  settings: readonly (readonly [number, number])[] = [],
): Promise<RawH2Connection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const frames: Frame[] = [];
    const waiting = new Set<() => void>();
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < 9 + length) break;
        const received: Frame = {
          type: pending[3]!,
          flags: pending[4]!,
          stream: pending.readUInt32BE(5) & 0x7fffffff,
          payload: pending.subarray(9, 9 + length),
        };
        pending = pending.subarray(9 + length);
        frames.push(received);
        if (received.type === FRAME.settings && (received.flags & FLAG.ack) === 0) {
          if (!socket.destroyed) socket.write(frame(FRAME.settings, FLAG.ack, 0));
        }
      }
      for (const check of waiting) check();
    });
    const closed = new Promise<void>((done) => {
      socket.once('close', () => {
        for (const check of waiting) check();
        done();
      });
    });
    // A reset after the server's GOAWAY is an expected end here, not a failure.
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      socket.write(Buffer.concat([Buffer.from(H2_PREFACE, 'latin1'), settingsFrame(settings)]));
      const connection: RawH2Connection = {
        socket,
        frames: () => frames,
        closed,
        write: (bytes) => !socket.destroyed && socket.write(bytes),
        frame: (what, match, ms = 10_000) =>
          within(
            what,
            ms,
            new Promise<Frame>((found, failed) => {
              const check = (): void => {
                const hit = frames.find(match);
                if (hit !== undefined) {
                  waiting.delete(check);
                  found(hit);
                } else if (socket.destroyed) {
                  waiting.delete(check);
                  failed(new Error(`${what}: the connection closed first`));
                }
              };
              waiting.add(check);
              check();
            }),
          ),
        destroy: () => socket.destroy(),
      };
      connection
        .frame("the server's SETTINGS", (f) => f.type === FRAME.settings && f.flags === 0)
        .then(() => resolve(connection), reject);
    });
    socket.once('error', reject);
  });
}
