/**
 * What checking a reply's shape costs the SDK, beside what decoding the reply costs (the JSON.parse
 * it paid before it checked anything): the reply to one acquire, and to an acquire.batch of 500
 * (the auto-batcher's default). In this process, no I/O; the median of ROUNDS rounds after a
 * warm-up, each round alternating the two so that the machine's noise falls on both.
 */
import type { AcquireReply, AcquireRequest } from '@app/contracts';
import type { Msg } from 'nats';
import { ReplyGuard } from '../../apps/limiter/src/nats/reply-guard';
import { decodeReply } from '../../libs/client/src/codec';
import { unguessableToken } from '../../libs/client/src/nats/reply-mux';
import { batchReplies, decisionReply } from '../../libs/client/src/replies';

const ROUNDS = 7;
const BATCH = 500;

export interface ReplyCheckFigure {
  /** Microseconds to decode the reply's bytes (JSON.parse). */
  readonly decodeUs: number;
  /** Microseconds to check the decoded reply against the contract. */
  readonly checkUs: number;
}

function reply(i: number): AcquireReply {
  return {
    allowed: true,
    code: 'OK',
    requestId: `req-${i}-7f3a9c`,
    key: `user-${i}`,
    quota: 'default',
    limit: 1_000_000_000,
    remaining: 999_999_000 - i,
    resetMs: 420,
    retryAfterMs: 0,
    waitedMs: 0,
    limitName: 'requests',
    shadow: false,
  };
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Every result goes here, so that no call can be optimised away as unused. */
let sink: unknown;

function microseconds(iterations: number, run: () => unknown): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) sink = run();
  return Number(process.hrtime.bigint() - start) / 1e3 / iterations;
}

function figure(bytes: Uint8Array, check: (json: unknown) => unknown, iterations: number) {
  const json = decodeReply(bytes);
  if (check(json) === undefined) throw new Error('the reply did not pass its check');
  microseconds(iterations, () => check(decodeReply(bytes)));
  const decode: number[] = [];
  const checked: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    decode.push(microseconds(iterations, () => decodeReply(bytes)));
    checked.push(microseconds(iterations, () => check(json)));
  }
  if (sink === undefined) throw new Error('no result');
  return { decodeUs: median(decode), checkUs: median(checked) };
}

export function replyCheckFigures(quick: boolean): {
  single: ReplyCheckFigure;
  batch: ReplyCheckFigure;
} {
  const request: AcquireRequest = { key: 'user-0' };
  const requests: AcquireRequest[] = Array.from({ length: BATCH }, (_, i) => ({
    key: `user-${i}`,
  }));
  const one = Buffer.from(JSON.stringify(reply(0)));
  const many = Buffer.from(JSON.stringify({ replies: requests.map((_, i) => reply(i)) }));
  return {
    single: figure(one, (json) => decisionReply(json, request), quick ? 20_000 : 200_000),
    batch: figure(many, (json) => batchReplies(json, requests), quick ? 50 : 500),
  };
}

export const REPLY_CHECK_BATCH = BATCH;

export interface ReplySubjectFigure {
  /** Microseconds to make one SDK reply token (96 random bits) and, its peer, a counted one. */
  readonly tokenUs: number;
  readonly counterUs: number;
  /** Microseconds for the limiter to check a reply subject, beside decoding the request's JSON. */
  readonly guardUs: number;
  readonly decodeRequestUs: number;
}

/**
 * What unguessable reply subjects cost (issue 25 review): the SDK's token against the counter it
 * used before, and the limiter's reply-subject check against the request's own decode, which every
 * request pays. Same rounds, alternating.
 */
export function replySubjectFigures(quick: boolean): ReplySubjectFigure {
  const iterations = quick ? 50_000 : 500_000;
  const guard = ReplyGuard.forRequests('ratelimit.v1', '_INBOX_limiter');
  const msg = {
    subject: 'ratelimit.v1.acquire',
    reply: `_INBOX.${'x'.repeat(16)}.${unguessableToken()}`,
  } as Msg;
  const request = Buffer.from(JSON.stringify({ key: 'user-1', quota: 'api', cost: 1 }));
  let counter = 0;
  const rounds = {
    token: [] as number[],
    counter: [] as number[],
    guard: [] as number[],
    decode: [] as number[],
  };
  for (let round = 0; round <= ROUNDS; round++) {
    const token = microseconds(iterations, () => unguessableToken());
    const counted = microseconds(iterations, () => String(++counter));
    const guarded = microseconds(iterations, () => guard.refuses(msg));
    const decoded = microseconds(iterations, () => JSON.parse(request.toString()));
    if (round === 0) continue; // warm-up
    rounds.token.push(token);
    rounds.counter.push(counted);
    rounds.guard.push(guarded);
    rounds.decode.push(decoded);
  }
  return {
    tokenUs: median(rounds.token),
    counterUs: median(rounds.counter),
    guardUs: median(rounds.guard),
    decodeRequestUs: median(rounds.decode),
  };
}
