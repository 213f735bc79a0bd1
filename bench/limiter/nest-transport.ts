/**
 * The "NestJS transport" figures: the limiter's NATS side as a Nest transport strategy (this
 * build) against the same limiter serving nats.js directly (the build before it), in one run,
 * peers alternating round by round. Plain JSON takes the strategy's fast path; the envelope row
 * is what a Nest ClientProxy sends, through the Nest handler pipeline.
 */
import { cpus } from 'node:os';
import type { NatsConnection } from 'nats';
import { closedLoop } from './nats-load';
import { nestEnvelopes } from './nest-envelopes';
import { median, rounds, ROUNDS } from './rounds';

export interface TransportRun {
  readonly nc: NatsConnection;
  /** Subject prefixes of the strategy build and of the direct (before) build. */
  readonly strategy: string;
  readonly direct: string;
  readonly directRef: string;
  readonly singles: readonly Buffer[];
  readonly batches: readonly Buffer[];
  readonly inFlight: number;
  readonly batchInFlight: number;
  readonly batchSize: number;
  readonly seconds: number;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;

export async function transportFigures(run: TransportRun): Promise<string> {
  const { nc, strategy, direct, singles, batches, seconds } = run;
  const single = (prefix: string, payloads: readonly Buffer[]) => () =>
    closedLoop(nc, `${prefix}.acquire`, payloads, run.inFlight, seconds);
  const batch = (prefix: string, payloads: readonly Buffer[]) => async () =>
    run.batchSize *
    (await closedLoop(nc, `${prefix}.acquire.batch`, payloads, run.batchInFlight, seconds));
  const envelopes = nestEnvelopes(`${strategy}.acquire`, singles);
  const batchEnvelopes = nestEnvelopes(`${strategy}.acquire.batch`, batches);

  process.stderr.write('(e) NestJS transport: acquires, plain and envelope\n');
  const [eDirect, eStrategy, eEnvelope] = (
    await rounds([single(direct, singles), single(strategy, singles), single(strategy, envelopes)])
  ).map(median);
  process.stderr.write('(f) NestJS transport: batches, plain and envelope\n');
  const [fDirect, fStrategy, fEnvelope] = (
    await rounds([
      batch(direct, batches),
      batch(strategy, batches),
      batch(strategy, batchEnvelopes),
    ])
  ).map(median);

  const row = (figure: string, value: number, peer: number, goal: string): string =>
    `| ${figure} | ${fmt(value)} | ${fmt(peer)} | ${ratio(value, peer)} | ${goal} |`;
  const acquires = `NATS acquire, ${run.inFlight} in flight, req/s`;
  const batched = `NATS batch of ${run.batchSize}, ${run.batchInFlight} in flight, decisions/s`;
  return [
    `node ${process.version}; ${cpus().length} cores shared by the load generator, both limiters`,
    `and nats-server; median of ${ROUNDS} rounds of ${seconds}s, the three alternating round by`,
    `round. Peer: the limiter serving nats.js directly, built from ${run.directRef}.`,
    '',
    '| figure | strategy | direct (before) | ratio | goal |',
    '|---|---:|---:|---:|---|',
    row(`(e) ${acquires}, plain JSON (fast path)`, eStrategy!, eDirect!, '>= 0.95x'),
    row(`(e) ${acquires}, Nest envelope (ClientProxy.send)`, eEnvelope!, eDirect!, ''),
    row(`(f) ${batched}, plain JSON (fast path)`, fStrategy!, fDirect!, '>= 0.95x'),
    row(`(f) ${batched}, Nest envelope (ClientProxy.send)`, fEnvelope!, fDirect!, ''),
  ].join('\n');
}
