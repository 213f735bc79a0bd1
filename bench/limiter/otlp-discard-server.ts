/**
 * The collector of the tracing figure (j), a process of its own so that its work does not slow
 * the load generator: `POST /v1/traces` (OTLP/HTTP JSON) answered 200 and discarded, its spans
 * counted without parsing (one `"spanId":` key per span); `GET /count` answers that count.
 * argv: port
 */
import { createServer } from 'node:http';

const SPAN_ID = Buffer.from('"spanId":');

function spansIn(body: Buffer): number {
  let n = 0;
  for (let at = body.indexOf(SPAN_ID); at !== -1; at = body.indexOf(SPAN_ID, at + 1)) n++;
  return n;
}

const port = Number(process.argv[2] ?? 4318);
let spans = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/count') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(String(spans));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.url === '/v1/traces') spans += spansIn(Buffer.concat(chunks));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
