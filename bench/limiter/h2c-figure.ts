/**
 * Figure (g) of bench:limiter: h2c with many streams on few connections, the limiter's
 * `POST /rate/:key` beside a bare node:http2 server (http2-bare-server.ts), both driven by the
 * same closed-loop generator (h2-load.ts) in a process of its own, peers alternating round by round.
 */
import { join } from 'node:path';
import { freePort, runNode, startNode, type Child } from './processes';
import { median, rounds } from './rounds';

export const H2C_SESSIONS = 4;
export const H2C_STREAMS = 64;

export interface H2cFigure {
  readonly limiter: number;
  readonly bare: number;
}

interface Load {
  requests: { average: number };
  non2xx: number;
  errors: number;
}

/** Requests per second over `seconds` (at least 1), failing on any answer that is not 2xx. */
async function h2Load(url: string, seconds: number): Promise<number> {
  const out = await runNode([
    join(__dirname, 'h2-load.js'),
    url,
    String(H2C_SESSIONS),
    String(H2C_STREAMS),
    String(Math.max(1, Math.round(seconds))),
  ]);
  const result = JSON.parse(out) as Load;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return result.requests.average;
}

/** Starts the bare peer, warms both up, measures both; the peer is stopped before returning. */
export async function h2cFigure(
  limiterUrl: string,
  seconds: number,
  warmupSeconds: number,
): Promise<H2cFigure> {
  const port = await freePort();
  const bare: Child = await startNode(
    [join(__dirname, 'http2-bare-server.js'), String(port)],
    {},
    (out) => out.includes('ready'),
  );
  try {
    const limiterRate = `${limiterUrl}/rate/bench-key`;
    const bareRate = `http://127.0.0.1:${port}/rate/bench-key`;
    await h2Load(limiterRate, warmupSeconds);
    await h2Load(bareRate, warmupSeconds);
    const [limiter, peer] = (
      await rounds([() => h2Load(limiterRate, seconds), () => h2Load(bareRate, seconds)])
    ).map(median);
    return { limiter: limiter!, bare: peer! };
  } finally {
    await bare.stop();
  }
}
