import type { NatsSubjects } from '@app/contracts';
import type { MsgHdrs } from 'nats';
import { SHUTTING_DOWN_REPLY, shuttingDownDecision } from '../engine-host/shutting-down';
import { encodeJson } from './nats-codec';
import type { NatsReply, NatsRequestsService } from './nats-requests.service';

export interface NatsHandler {
  readonly subject: string;
  readonly handle: (data: Uint8Array, headers: MsgHdrs | undefined) => NatsReply;
  /** What a request still unanswered at the shutdown deadline gets, in the operation's shape. */
  readonly shuttingDown: Uint8Array;
}

const DECISION_SHUTTING_DOWN = encodeJson(shuttingDownDecision());
const REPLY_SHUTTING_DOWN = encodeJson(SHUTTING_DOWN_REPLY);

/** The request-reply subjects of CONTRACT.md section 3, each a one-line delegation. */
export function natsHandlers(subjects: NatsSubjects, requests: NatsRequestsService): NatsHandler[] {
  const decision = DECISION_SHUTTING_DOWN;
  const reply = REPLY_SHUTTING_DOWN;
  return [
    {
      subject: subjects.acquire,
      handle: (data, h) => requests.acquire(data, h),
      shuttingDown: decision,
    },
    {
      subject: subjects.acquireBatch,
      handle: (data, h) => requests.batch(data, h),
      shuttingDown: reply,
    },
    {
      subject: subjects.decide,
      handle: (data, h) => requests.decide(data, h),
      shuttingDown: decision,
    },
    {
      subject: subjects.release,
      handle: (data, h) => requests.release(data, h),
      shuttingDown: reply,
    },
    { subject: subjects.usage, handle: (data, h) => requests.usage(data, h), shuttingDown: reply },
    { subject: subjects.stats, handle: (data, h) => requests.stats(data, h), shuttingDown: reply },
  ];
}
