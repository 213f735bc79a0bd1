import { Logger } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import type { LogFields } from './pino-nest-logger';

/** What `server.address()` answers: the bound address, a pipe path, or null before listening. */
type BoundAddress = AddressInfo | string | null;

/**
 * The start line: the address and port the server is really bound to (the port the system chose
 * when PORT=0), as `address` and `port`, and as a URL in the text.
 */
export function logListening(context: string, server: { address(): BoundAddress }): void {
  const bound = server.address();
  const logger = new Logger(context);
  if (bound === null || typeof bound === 'string') {
    logger.log({ msg: `listening on ${bound ?? '(no address)'}`, address: bound });
    return;
  }
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  logger.log({
    msg: `listening on http://${host}:${bound.port}`,
    address: bound.address,
    port: bound.port,
    family: bound.family,
  } satisfies LogFields);
}
