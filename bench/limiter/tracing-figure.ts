/**
 * (j) of bench/limiter.bench.ts: what tracing costs. Two limiters of this build, one without
 * OTEL_EXPORTER_OTLP_ENDPOINT (the SDK not loaded) and one sending a span per acquire to an
 * OTLP/HTTP collector that counts the spans and discards them (otlp-discard-server.ts, a process
 * of its own); NATS single acquires and HTTP `POST /rate/:key`, rounds alternating between the
 * two. No request carries a traceparent, so every acquire starts a sampled trace of its own: the
 * most tracing can cost.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from 'nats';
import { closedLoop } from './nats-load';
import { freePort, startNode, type Child } from './processes';
import { median, rounds } from './rounds';

export interface TracingFigure {
  readonly natsOff: number;
  readonly natsOn: number;
  readonly httpOff: number;
  readonly httpOn: number;
  /** Spans the receiver got, over the traced limiter's acquires (the queue drops the excess). */
  readonly exportedShare: number;
}

export interface TracingFigureOptions {
  readonly nc: NatsConnection;
  readonly singles: readonly Uint8Array[];
  readonly inFlight: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** HTTP req/s against `url` for `seconds` (autocannon in its own process). */
  readonly http: (url: string, seconds: number) => Promise<number>;
  readonly start: (
    prefix: string,
    dataDir: string,
    env?: Record<string, string>,
  ) => Promise<Child & { url: string }>;
}

export async function tracingFigure(o: TracingFigureOptions): Promise<TracingFigure> {
  const receiverPort = await freePort();
  const receiver = await startNode(
    [join(__dirname, 'otlp-discard-server.js'), String(receiverPort)],
    {},
    (out) => out.includes('ready'),
  );
  const spans = async (): Promise<number> =>
    Number(await (await fetch(`http://127.0.0.1:${receiverPort}/count`)).text());
  const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'limiter-bench-tracing-')));
  const prefixes = [0, 1].map(() => `bench.${randomUUID().replaceAll('-', '')}`);
  const children: Child[] = [];
  try {
    const off = await o.start(prefixes[0]!, dirs[0]!);
    children.push(off);
    const on = await o.start(prefixes[1]!, dirs[1]!, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
    });
    children.push(on);
    let tracedAcquires = 0;
    const nats = (prefix: string, seconds: number, traced: boolean) => async () => {
      const rate = await closedLoop(o.nc, `${prefix}.acquire`, o.singles, o.inFlight, seconds);
      if (traced) tracedAcquires += Math.round(rate * seconds);
      return rate;
    };
    const http = (url: string, seconds: number, traced: boolean) => async () => {
      const rate = await o.http(`${url}/rate/bench-key`, seconds);
      if (traced) tracedAcquires += Math.round(rate * Math.max(1, Math.round(seconds)));
      return rate;
    };
    await nats(prefixes[0]!, o.warmupSeconds, false)();
    await nats(prefixes[1]!, o.warmupSeconds, true)();
    await http(off.url, 1, false)();
    await http(on.url, 1, true)();
    const [natsOff, natsOn] = (
      await rounds([nats(prefixes[0]!, o.seconds, false), nats(prefixes[1]!, o.seconds, true)])
    ).map(median);
    const [httpOff, httpOn] = (
      await rounds([http(off.url, o.seconds, false), http(on.url, o.seconds, true)])
    ).map(median);
    // SIGTERM: the traced limiter sends the spans still queued before it exits.
    await on.stop();
    return {
      natsOff: natsOff!,
      natsOn: natsOn!,
      httpOff: httpOff!,
      httpOn: httpOn!,
      exportedShare: (await spans()) / tracedAcquires,
    };
  } finally {
    for (const child of children.reverse()) await child.stop();
    await receiver.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
