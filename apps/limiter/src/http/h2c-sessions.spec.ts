/**
 * The idle bound of h2c sessions, with an idle timeout short enough to watch (the limiter's is
 * KEEP_ALIVE_TIMEOUT_MS, 72 s): PrefaceRouter and H2cSessions on a bare HTTP/1.1 server, real
 * sockets, node:http2 as the client. The wall clock is stepped with Jest's fake Date, the rest
 * of time left real.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { H2cSessions } from './h2c-sessions';
import { PrefaceRouter } from './preface-router';

const IDLE_MS = 300;
const HOUR = 3_600_000;

/**
 * Resolves once the session has closed, with the distinct GOAWAY codes it was sent (Node sends
 * one when it closes the session and another when it destroys it).
 */
function ended(session: ClientHttp2Session): Promise<number[]> {
  const codes = new Set<number>();
  session.on('goaway', (code: number) => codes.add(code));
  return new Promise((resolve) => session.once('close', () => resolve([...codes])));
}

function answer(session: ClientHttp2Session, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path });
    stream.on('response', (headers) => resolve(Number(headers[':status'])));
    stream.on('error', reject);
    stream.resume();
  });
}

describe('h2c sessions with nothing in flight', () => {
  let server: Server;
  let sessions: H2cSessions;
  let port: number;
  /** Requests to /hold wait here until the test answers them. */
  const held: ServerResponse[] = [];
  /** How many answers have closed on the server's side (after H2cSessions saw them close). */
  let closedAnswers = 0;

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      response.once('close', () => closedAnswers++);
      if (request.url === '/hold') held.push(response);
      else response.end('ok');
    });
    sessions = new H2cSessions(server, { requestTimeoutMs: 10_000, idleTimeoutMs: IDLE_MS });
    new PrefaceRouter(server, sessions, 10_000);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    sessions.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('are closed with a graceful GOAWAY once idle for the idle timeout', async () => {
    const session = connect(`http://127.0.0.1:${port}`);
    const end = ended(session);
    expect(await answer(session, '/')).toBe(200);

    expect(await end).toEqual([0]);
  });

  it('are kept while a request awaits its answer, then closed once idle', async () => {
    const session = connect(`http://127.0.0.1:${port}`);
    let closed = false;
    const end = ended(session).finally(() => (closed = true));
    const status = answer(session, '/hold');
    await waitFor(() => held.length === 1);

    // Many idle timeouts with a request in flight: the session stays.
    await new Promise((r) => setTimeout(r, 4 * IDLE_MS));
    expect(closed).toBe(false);
    held.pop()!.end('late');

    expect(await status).toBe(200);
    expect(await end).toEqual([0]);
  });

  it('are closed once idle when the wall clock steps back an hour meanwhile (issue 25 point 7)', async () => {
    const session = connect(`http://127.0.0.1:${port}`);
    const end = ended(session);
    const before = closedAnswers;
    expect(await answer(session, '/')).toBe(200);
    // The session's last activity is this answer's close: the step comes after it.
    await waitFor(() => closedAnswers > before);
    // Only Date is faked, running on from an hour before: timers and performance.now stay real.
    jest.useFakeTimers({
      advanceTimers: true,
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    try {
      jest.setSystemTime(Date.now() - HOUR);

      expect(await end).toEqual([0]);
    } finally {
      jest.useRealTimers();
    }
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('not within 10 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}
