import type { NatsSubjects } from '@app/contracts';
import { SHUTTING_DOWN_REPLY, shuttingDownDecision } from '../engine-host/shutting-down';
import { encodeJson } from './nats-codec';
import type { NatsReply, NatsRequestsService } from './nats-requests.service';

export interface NatsHandler {
  readonly subject: string;
  readonly handle: (data: Uint8Array) => NatsReply;
  /** What a request still unanswered at the shutdown deadline gets, in the operation's shape. */
  readonly shuttingDown: Uint8Array;
}

const DECISION_SHUTTING_DOWN = encodeJson(shuttingDownDecision());
const REPLY_SHUTTING_DOWN = encodeJson(SHUTTING_DOWN_REPLY);

/** The request-reply subjects of docs/contract.md, NATS, each a one-line delegation. */
export function natsHandlers(subjects: NatsSubjects, requests: NatsRequestsService): NatsHandler[] {
  const decision = DECISION_SHUTTING_DOWN;
  const reply = REPLY_SHUTTING_DOWN;
  return [
    { subject: subjects.acquire, handle: (data) => requests.acquire(data), shuttingDown: decision },
    { subject: subjects.acquireBatch, handle: (data) => requests.batch(data), shuttingDown: reply },
    { subject: subjects.decide, handle: (data) => requests.decide(data), shuttingDown: decision },
    { subject: subjects.release, handle: (data) => requests.release(data), shuttingDown: reply },
    { subject: subjects.usage, handle: (data) => requests.usage(data), shuttingDown: reply },
    { subject: subjects.stats, handle: (data) => requests.stats(data), shuttingDown: reply },
  ];
}
