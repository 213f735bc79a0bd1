/**
 * A TCP proxy that can stop passing bytes while keeping every connection open: to the client, the
 * server behind it has hung (as a SIGSTOPped Redis does), without stopping that server.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface FreezableProxy {
  readonly port: number;
  /** From now on, bytes in either direction are held back (never delivered). */
  freeze(): void;
  /** What clients sent since the freeze (latin1): shows which requests reached the server. */
  held(): string;
  close(): Promise<void>;
}

export async function freezableProxy(targetPort: number): Promise<FreezableProxy> {
  let frozen = false;
  let held = '';
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (chunk: Buffer) => {
        if (!frozen) to.write(chunk);
        else if (from === client) held += chunk.toString('latin1');
      });
      from.on('error', () => to.destroy());
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    freeze: () => {
      frozen = true;
    },
    held: () => held,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
