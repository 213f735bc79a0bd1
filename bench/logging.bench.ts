/**
 * npm run bench:logging — what a log line costs the event loop: lines through Nest's Logger and
 * libs/logging's pino (JSON, written synchronously, to /dev/null so the disk is not measured),
 * beside a bare pino call with the same fields (the peer) and JSON.stringify of them. Then what a
 * line over its kind's budget costs (counted, not built), and a line below LOG_LEVEL.
 * BENCH_QUICK=1 shortens every run (smoke test).
 */
import { Logger } from '@nestjs/common';
import pino from 'pino';
import { createPinoLogger, PinoNestLogger, ThrottledLog, useLogger } from '../libs/logging/src';

const QUICK = process.env.BENCH_QUICK === '1';
const LINES = QUICK ? 20_000 : 300_000;
const ROUNDS = 5;

/** Nanoseconds per call of `line`, the median of ROUNDS after a warm-up. */
function nsPerLine(line: (i: number) => void): number {
  for (let i = 0; i < LINES / 10; i++) line(i);
  const results: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < LINES; i++) line(i);
    results.push(Number(process.hrtime.bigint() - started) / LINES);
  }
  return results.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
}

/** The fields of a refused HTTP request, as refusal-log.ts writes them. */
const refusal = (i: number) => ({
  msg: '400 key: must be 1..256 bytes of UTF-8',
  status: 400,
  field: 'key',
  method: 'POST',
  route: '/v1/acquire',
  client: '127.0.0.1',
  correlationId: `bench-${i}`,
  kind: 'http.invalid',
});

function main(): void {
  const devNull = (): pino.DestinationStream => pino.destination({ dest: '/dev/null', sync: true });
  useLogger(
    'bench',
    { logLevel: 'info', logFormat: 'json' },
    { stream: devNull(), isTerminal: false },
  );
  const logger = new Logger('LimiterHttp');
  const peer = pino(
    {
      base: { app: 'bench', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    devNull(),
  ).child({ context: 'LimiterHttp' });
  // The same lines built and serialised, handed to a stream that drops them: no system call.
  const unwritten = new PinoNestLogger(
    createPinoLogger({
      app: 'bench',
      level: 'info',
      format: 'json',
      destination: { stream: { write: () => undefined }, isTerminal: false },
    }),
  );
  // Over budget from its 11th line on: what the rest of a flood costs.
  const flood = new ThrottledLog('LimiterHttp', 'http.invalid', 'warn');

  const rows: [string, number][] = [
    ['Logger.log, text only', nsPerLine(() => logger.log('control bucket reconciled: 4 put'))],
    ['Logger.warn, 8 fields (a refused request)', nsPerLine((i) => logger.warn(refusal(i)))],
    [
      'peer: bare pino .warn, same 8 fields',
      nsPerLine((i) => {
        const { msg, ...fields } = refusal(i);
        peer.warn(fields, msg);
      }),
    ],
    [
      'Logger.warn, 8 fields, to a stream that drops it',
      nsPerLine((i) => unwritten.warn(refusal(i), 'LimiterHttp')),
    ],
    ['JSON.stringify of the 8 fields alone', nsPerLine((i) => JSON.stringify(refusal(i)))],
    [
      'ThrottledLog over budget (counted, not built)',
      nsPerLine((i) => flood.write(() => refusal(i))),
    ],
    ['Logger.debug below LOG_LEVEL=info', nsPerLine(() => logger.debug('not written'))],
  ];
  console.log(`node ${process.version}, ${LINES} lines a round, median of ${ROUNDS} rounds`);
  console.log('| line | ns per line |');
  console.log('| --- | ---: |');
  for (const [what, ns] of rows) console.log(`| ${what} | ${Math.round(ns)} |`);
}

main();
