/**
 * A TCP relay in front of a server (NATS, here) that a test controls: it can stop passing what
 * clients send after an exact number of bytes, or a given text plus some bytes (the client then
 * hangs as if the network froze, at a point that does not depend on timing), and cut every
 * connection (a network outage). Bytes from the server always pass.
 */
import { createServer, connect as connectTcp, type Server, type Socket } from 'node:net';

export interface TcpGate {
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Client bytes passed so far, all connections together. */
  readonly forwarded: number;
  /** True once a freeze has been reached: nothing more from clients passes. */
  readonly frozen: boolean;
  /** Passes `bytes` more client bytes from now on, then freezes. */
  freezeAfter(bytes: number): void;
  /** Passes client bytes until `text` has passed and `bytes` more, then freezes. */
  freezeAfterText(text: string, bytes: number): void;
  /** Closes every connection and refuses new ones until open(). */
  cut(): void;
  /**
   * Lets new connections through again (ends a freeze or a cut). A frozen connection lost the
   * rest of the chunk it froze in: open once its client has gone.
   */
  open(): void;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
}

export async function startTcpGate(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpGate> {
  const pairs = new Set<Pair>();
  let forwarded = 0;
  let accepted = 0;
  let limit: number | undefined;
  let text: { readonly needle: Buffer; readonly extra: number } | undefined;
  let frozen = false;
  let cut = false;

  const freeze = (): void => {
    frozen = true;
    for (const { client } of pairs) client.pause();
  };

  const server: Server = createServer((client) => {
    accepted++;
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connectTcp(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    let tail = Buffer.alloc(0);
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.pipe(client);
    if (frozen) client.pause();
    client.on('data', (chunk: Buffer) => {
      if (frozen) return;
      if (text !== undefined) {
        const seen = Buffer.concat([tail, chunk]);
        const at = seen.indexOf(text.needle);
        if (at >= 0) {
          limit = forwarded + (at + text.needle.length - tail.length) + text.extra;
          text = undefined;
        } else {
          tail = seen.subarray(Math.max(0, seen.length - text.needle.length + 1));
        }
      }
      const allowed =
        limit === undefined ? chunk.length : Math.min(chunk.length, limit - forwarded);
      if (allowed > 0) upstream.write(chunk.subarray(0, allowed));
      forwarded += Math.max(0, allowed);
      if (limit !== undefined && forwarded >= limit) freeze();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;

  const cutAll = (): void => {
    cut = true;
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return {
    port,
    get accepted() {
      return accepted;
    },
    get forwarded() {
      return forwarded;
    },
    get frozen() {
      return frozen;
    },
    freezeAfter(bytes) {
      limit = forwarded + bytes;
    },
    freezeAfterText(needle, bytes) {
      text = { needle: Buffer.from(needle), extra: bytes };
    },
    cut: cutAll,
    open() {
      cut = false;
      frozen = false;
      limit = undefined;
      text = undefined;
    },
    async close() {
      cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
