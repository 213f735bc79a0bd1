/**
 * The peer of the limiter's h2c figure: a bare Node `http2.createServer` on cleartext, answering
 * every request 200 with a short text body (as GoCC's route answers the request id), through the
 * same compatibility API (request, response) the limiter's Fastify routes run on. argv: port
 */
import { createServer } from 'node:http2';

const port = Number(process.argv[2] ?? 8098);
let seq = 0;
const server = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
  response.end(`bench.${(seq++).toString(36)}`);
});
server.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  // Sessions the load generator left open do not hold the exit.
  setTimeout(() => process.exit(0), 1000).unref();
});
