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

type Operation = 'acquire' | 'batch' | 'decide' | 'release' | 'usage' | 'stats';

/** The request-reply subjects of docs/contract.md, NATS, each a one-line delegation. */
export function natsHandlers(subjects: NatsSubjects, requests: NatsRequestsService): NatsHandler[] {
  const serve = (subject: string, operation: Operation, shuttingDown: Uint8Array): NatsHandler => ({
    subject,
    handle: (data, headers) => requests[operation](data, headers),
    shuttingDown,
  });
  return [
    serve(subjects.acquire, 'acquire', DECISION_SHUTTING_DOWN),
    serve(subjects.acquireBatch, 'batch', REPLY_SHUTTING_DOWN),
    serve(subjects.decide, 'decide', DECISION_SHUTTING_DOWN),
    serve(subjects.release, 'release', REPLY_SHUTTING_DOWN),
    serve(subjects.usage, 'usage', REPLY_SHUTTING_DOWN),
    serve(subjects.stats, 'stats', REPLY_SHUTTING_DOWN),
  ];
}
