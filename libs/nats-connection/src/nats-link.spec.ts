import { createServer, type Server, type Socket } from 'node:net';
import { NatsLink } from './nats-link';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** A TCP server that accepts connections and never says a word: a NATS that hangs. */
async function silentServer(): Promise<{ server: Server; port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, sockets };
}

describe('NatsLink', () => {
  it('stops without waiting for a dial the server never answers', async () => {
    const { server, port, sockets } = await silentServer();
    const link = new NatsLink(
      { servers: `nats://127.0.0.1:${port}` },
      { up: () => undefined },
      quiet,
    );
    try {
      link.start();
      for (let i = 0; sockets.length === 0 && i < 1000; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(sockets).toHaveLength(1);
      // Stopped while the dial is still on the wire (its socket open, nothing answered): the stop
      // and the close that follows end then, not when the dial's own timeout (10 s) gives up.
      const dialStillOpen = await Promise.resolve(link.stop()).then(() => !sockets[0]!.destroyed);
      expect(dialStillOpen).toBe(true);
      await expect(link.close(1_000)).resolves.toBeUndefined();
      expect(sockets[0]!.destroyed).toBe(false);
      expect(link.connection).toBeUndefined();
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
