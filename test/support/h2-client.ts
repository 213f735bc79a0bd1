/**
 * node:http2 as the client of a limiter's port, prior-knowledge h2c as GoCC's own tests speak it.
 * Every wait is bounded.
 */
import {
  connect,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type SecureClientSessionOptions,
} from 'node:http2';
import { within } from './raw-http';

export interface H2Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A connected session to 127.0.0.1:`port`; its errors end it, they never throw in the test. */
export function h2Session(
  port: number,
  options: SecureClientSessionOptions = {},
): Promise<ClientHttp2Session> {
  const session = connect(`http://127.0.0.1:${port}`, options);
  session.on('error', () => undefined);
  return within(
    'an h2c session',
    10_000,
    new Promise<ClientHttp2Session>((resolve, reject) => {
      session.once('connect', () => resolve(session));
      session.once('close', () => reject(new Error('the session closed before it connected')));
    }),
  );
}

export interface H2RequestOptions {
  readonly method?: string;
  readonly body?: string | Buffer;
  readonly headers?: Record<string, string>;
}

/** Opens a stream for a request and sends it whole; the stream, to be read by `h2Answer`. */
export function h2Open(
  session: ClientHttp2Session,
  path: string,
  { method = 'GET', body, headers = {} }: H2RequestOptions = {},
): ClientHttp2Stream {
  const stream = session.request(
    { ':method': method, ':path': path, ...headers },
    { endStream: body === undefined },
  );
  stream.on('error', () => undefined);
  if (body !== undefined) stream.end(body);
  return stream;
}

/**
 * The answer on `stream`, once it has ended; rejects naming the RST_STREAM code if the stream
 * closed without one.
 */
export function h2Answer(stream: ClientHttp2Stream, ms = 10_000): Promise<H2Response> {
  return within(
    'an answer on the stream',
    ms,
    new Promise<H2Response>((resolve, reject) => {
      let headers: IncomingHttpHeaders | undefined;
      const chunks: Buffer[] = [];
      stream.on('response', (h) => (headers = h));
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.once('close', () => {
        if (headers === undefined) {
          reject(new Error(`no answer: the stream closed with code ${stream.rstCode}`));
          return;
        }
        const status = Number(headers[':status']);
        resolve({ status, headers, body: Buffer.concat(chunks).toString('utf8') });
      });
    }),
  );
}

export function h2Request(
  session: ClientHttp2Session,
  path: string,
  options: H2RequestOptions = {},
): Promise<H2Response> {
  return h2Answer(h2Open(session, path, options));
}
