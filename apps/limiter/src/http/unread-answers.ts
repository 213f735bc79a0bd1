import {
  constants,
  Http2ServerResponse,
  type Http2ServerRequest,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';

/**
 * What one h2c session holds in answers its client has not taken: bytes written to its streams
 * and not yet sent, because the client's flow-control windows (or its socket) do not let them
 * out. nghttp2's memory bound (maxSessionMemory) only refuses new streams, so without this count
 * a client that never reads could leave a whole answer per stream in the limiter's memory.
 */
export class UnreadAnswers {
  /** Bytes queued on the session's streams and not yet sent. */
  bytes = 0;
  /** When bytes last left (the client took some), or when the session started to hold any. */
  movedAt: number;

  /** `total`: what every session of the process holds, shared (UnreadTotal). */
  constructor(
    now: number,
    private readonly total: UnreadTotal = new UnreadTotal(Infinity),
  ) {
    this.movedAt = now;
  }

  /**
   * Whether an answer of `length` more bytes may be queued: within the session's `maxBytes`
   * (always when it holds nothing) and within what the process may hold in all.
   */
  admits(length: number, maxBytes: number): boolean {
    return (this.bytes === 0 || this.bytes + length <= maxBytes) && this.total.admits(length);
  }

  queued(length: number, now: number): void {
    if (this.bytes === 0) this.movedAt = now;
    this.bytes += length;
    this.total.bytes += length;
  }

  taken(length: number, now: number): void {
    this.bytes -= length;
    this.total.bytes -= length;
    this.movedAt = now;
  }

  /** Held, and nothing taken for `ms`. */
  stalled(now: number, ms: number): boolean {
    return this.bytes > 0 && now - this.movedAt >= ms;
  }
}

/**
 * What all the h2c sessions of a process hold in answers not taken: H2_MAX_UNREAD_BYTES bounds
 * one session, HTTP_MAX_CONNECTIONS the sessions, and their product (10 000 x 4 MiB) is no bound
 * a pod has. Past `maxBytes` in all, an answer is reset as one past its session's bound is, its
 * session's first included; stalled sessions are cut after the request timeout, freeing it.
 */
export class UnreadTotal {
  bytes = 0;

  constructor(readonly maxBytes: number) {}

  admits(length: number): boolean {
    return this.bytes + length <= this.maxBytes;
  }
}

type WriteCallback = (error: Error) => void;

/**
 * The compatibility layer's response, counting its answer against its session's UnreadAnswers
 * until it is sent. The whole answer counts from its first write, its `content-length` when it
 * announces one: Fastify writes a large HTTP/2 answer in 64 KiB chunks, keeping the rest until
 * the stream drains, so the chunks alone would not show what the answer holds. An answer that
 * would take the session past `maxBytes` (while it already holds some) is not written: its
 * stream is reset ENHANCE_YOUR_CALM, and the session goes on. Every write of an answer goes
 * through `write` (`end` calls it too).
 */
export function unreadCountingResponse(
  unreadOf: (session: ServerHttp2Session) => UnreadAnswers | undefined,
  maxBytes: number,
  now: () => number,
): typeof Http2ServerResponse {
  return class UnreadCountingResponse<
    Request extends Http2ServerRequest = Http2ServerRequest,
  > extends Http2ServerResponse<Request> {
    /** Bytes of this answer counted in its session's and not yet taken. */
    private held = 0;
    /** Bytes counted so far (the announced length from the first write), and written. */
    private counted = 0;
    private written = 0;
    private readonly unread: UnreadAnswers | undefined;

    constructor(stream: ServerHttp2Stream) {
      super(stream);
      this.unread = unreadOf(stream.session as ServerHttp2Session);
      // A reset or destroyed stream frees what it held, whether its callbacks ran or not.
      this.once('close', () => this.release(this.held));
    }

    override write(
      chunk: string | Uint8Array,
      encoding?: BufferEncoding | WriteCallback,
      callback?: WriteCallback,
    ): boolean {
      const done = typeof encoding === 'function' ? encoding : callback;
      const charset = typeof encoding === 'function' ? undefined : encoding;
      const unread = this.unread;
      const length =
        typeof chunk === 'string' ? Buffer.byteLength(chunk, charset) : chunk.byteLength;
      if (unread === undefined || length === 0) return super.write(chunk, charset!, done);
      const more = this.written === 0 ? Math.max(length, this.announced()) : 0;
      const extra = Math.max(more, this.written + length - this.counted);
      if (this.written === 0 && !unread.admits(extra, maxBytes)) {
        this.stream.close(constants.NGHTTP2_ENHANCE_YOUR_CALM);
        return false;
      }
      if (extra > 0) {
        unread.queued(extra, now());
        this.held += extra;
        this.counted += extra;
      }
      this.written += length;
      return super.write(chunk, charset!, (error) => {
        this.release(length);
        done?.(error);
      });
    }

    /** The answer's announced length (its headers may be set on the response or sent already). */
    private announced(): number {
      const header =
        this.getHeader('content-length') ?? this.stream.sentHeaders?.['content-length'];
      const length = Number(header);
      return Number.isSafeInteger(length) && length > 0 ? length : 0;
    }

    private release(length: number): void {
      const released = Math.min(length, this.held);
      if (released === 0) return;
      this.held -= released;
      this.unread!.taken(released, now());
    }
  };
}
