/**
 * Two attacks on the limiter's h2c side for bench:hostile (issue 25 points 3 and 4), each against
 * a limiter process the caller starts:
 *   - answers never read: connections with a flow-control window of 0 open every stream they may
 *     (`GET /debug?limit=1000` on a replica holding 1 000 keys) and send a PING every 2 s; the
 *     limiter's RSS is sampled while they hold on;
 *   - preface slowloris: the HTTP/2 preface, then a SETTINGS frame, one byte at a time; how long
 *     the connection is held, beside an HTTP/1.1 request head sent the same way.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { H2_PREFACE, SETTING, settingsFrame } from '../../test/support/raw-h2';
import { openRaw } from '../../test/support/raw-http';

/** The limiter's resident set, in MiB (Linux). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kib / 1024;
}

/** `count` keys held for the hour (a 1 h window), named long enough that a page is large. */
export async function holdKeys(url: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, async (_, j) => {
        const key = `tenant-${String(i + j).padStart(6, '0')}-${'k'.repeat(200)}`;
        const res = await fetch(`${url}/rate/${key}`, { method: 'POST' });
        await res.arrayBuffer();
      }),
    );
  }
}

export interface UnreadFigures {
  /** RSS before the attack. */
  readonly idleMiB: number;
  /** The highest RSS sampled while the clients held on. */
  readonly peakMiB: number;
  /** RSS when the clients gave up. */
  readonly endMiB: number;
  /** Connections the limiter had closed by then, and how many were opened. */
  readonly closed: number;
  readonly opened: number;
  /** When the last of those closed, ms after the attack began. */
  readonly lastClosedMs: number;
}

/**
 * `connections` h2c connections, each with an initial window of 0 (node:http2 as the client, as
 * the attack in the issue), open `streams` streams of `path` and then only PING, every 2 s, for
 * `holdMs`.
 */
export async function unreadAnswers(
  port: number,
  pid: number,
  { connections = 8, streams = 128, holdMs = 30_000, path = '/debug?limit=1000' } = {},
): Promise<UnreadFigures> {
  const idleMiB = rssMiB(pid);
  const started = Date.now();
  let closed = 0;
  let lastClosedMs = NaN;
  const sessions = Array.from({ length: connections }, () => {
    const session = connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 0 } });
    session.on('error', () => undefined);
    session.once('close', () => {
      closed++;
      lastClosedMs = Date.now() - started;
    });
    for (let i = 0; i < streams; i++) {
      session.request({ ':path': path }).on('error', () => undefined);
    }
    return session;
  });
  const pings = setInterval(() => {
    for (const session of sessions) if (!session.destroyed) session.ping(() => undefined);
  }, 2_000);
  let peakMiB = idleMiB;
  while (Date.now() - started < holdMs) {
    await new Promise((r) => setTimeout(r, 250));
    peakMiB = Math.max(peakMiB, rssMiB(pid));
  }
  clearInterval(pings);
  const endMiB = rssMiB(pid);
  const figures = { idleMiB, peakMiB, endMiB, closed, opened: connections, lastClosedMs };
  for (const session of sessions) session.destroy();
  return figures;
}

/** Resolves with the ms from the first byte to the server's close, or Infinity past `capMs`. */
async function heldFor(port: number, bytes: Buffer, everyMs: number, capMs: number) {
  const client = await openRaw(port);
  const started = Date.now();
  let sent = 0;
  const send = (): void => {
    if (sent < bytes.length) client.write(bytes.subarray(sent, ++sent));
  };
  send();
  const timer = setInterval(send, everyMs);
  const cap = new Promise<'cap'>((r) => setTimeout(() => r('cap'), capMs).unref());
  const end = await Promise.race([client.closed.then(() => 'closed' as const), cap]);
  clearInterval(timer);
  client.destroy();
  return end === 'cap' ? Infinity : Date.now() - started;
}

/**
 * The HTTP/2 preface and then a SETTINGS frame, one byte every `everyMs`: the ms the connection
 * was held; beside it, an HTTP/1.1 request head sent the same way.
 */
export async function prefaceSlowloris(
  port: number,
  everyMs: number,
  capMs: number,
): Promise<{ h2: number; http1: number }> {
  const preface = Buffer.concat([
    Buffer.from(H2_PREFACE, 'latin1'),
    settingsFrame([[SETTING.initialWindowSize, 65_535]]),
  ]);
  const head = Buffer.from(`GET /healthz HTTP/1.1\r\nhost: limiter\r\n${'x'.repeat(60)}`, 'latin1');
  const [h2, http1] = await Promise.all([
    heldFor(port, preface, everyMs, capMs),
    heldFor(port, head, everyMs, capMs),
  ]);
  return { h2, http1 };
}
