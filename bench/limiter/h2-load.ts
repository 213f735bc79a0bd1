/**
 * A closed-loop HTTP/2 (h2c, prior knowledge) load generator, run in a process of its own as
 * autocannon is: `sessions` connections, each keeping `streams` requests in flight (an answer
 * triggers the next request on its session). Prints JSON: { requests: { average }, non2xx, errors }
 * as autocannon does. argv: url sessions streams seconds method
 */
import { connect, type ClientHttp2Session } from 'node:http2';

const [url = 'http://127.0.0.1:8080/', sessionsArg = '4', streamsArg = '64', secondsArg = '3'] =
  process.argv.slice(2);
const method = process.argv[6] ?? 'POST';
const target = new URL(url);
const headers = { ':method': method, ':path': `${target.pathname}${target.search}` };

let done = 0;
let non2xx = 0;
let errors = 0;
let running = true;

function next(session: ClientHttp2Session): void {
  if (!running || session.closed || session.destroyed) return;
  const stream = session.request(headers, { endStream: true });
  let status = 0;
  stream.on('response', (h) => (status = Number(h[':status'])));
  stream.on('error', () => undefined);
  stream.resume();
  stream.once('close', () => {
    if (status >= 200 && status < 300) done++;
    else if (status === 0) errors++;
    else non2xx++;
    next(session);
  });
}

async function main(): Promise<void> {
  const sessions = await Promise.all(
    Array.from(
      { length: Number(sessionsArg) },
      () =>
        new Promise<ClientHttp2Session>((resolve, reject) => {
          const session = connect(target.origin);
          session.once('connect', () => resolve(session));
          session.once('error', reject);
        }),
    ),
  );
  const started = process.hrtime.bigint();
  for (const session of sessions) {
    for (let i = 0; i < Number(streamsArg); i++) next(session);
  }
  await new Promise((r) => setTimeout(r, Number(secondsArg) * 1000));
  running = false;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  for (const session of sessions) session.destroy();
  process.stdout.write(
    `${JSON.stringify({ requests: { average: done / seconds }, non2xx, errors })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
