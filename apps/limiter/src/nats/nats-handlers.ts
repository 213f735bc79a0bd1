import type { NatsSubjects } from '@app/contracts';
import type { Msg } from 'nats';
import { SHUTTING_DOWN_REPLY, shuttingDownDecision } from '../engine-host/shutting-down';
import { encodeJson } from './nats-codec';
import type { NatsReply, NatsRequestsService } from './nats-requests.service';

/** The operations served on NATS; each is also the `@MessagePattern` of its controller method. */
export type Operation = 'acquire' | 'batch' | 'decide' | 'release' | 'usage' | 'stats';

/** The `@EventPattern` of an operation sent with ClientProxy.emit (no reply expected). */
export function eventPattern(operation: Operation): string {
  return `${operation}.event`;
}

export interface NatsHandler {
  readonly subject: string;
  readonly operation: Operation;
  /** The fast path: the contract's plain JSON straight to the service, no Nest pipeline. */
  readonly handle: (data: Uint8Array, msg: Msg) => NatsReply;
  /** What a request still unanswered at the shutdown deadline gets, in the operation's shape. */
  readonly shuttingDown: Uint8Array;
}

const DECISION_SHUTTING_DOWN = encodeJson(shuttingDownDecision());
const REPLY_SHUTTING_DOWN = encodeJson(SHUTTING_DOWN_REPLY);

/** The request-reply subjects of docs/contract.md, NATS, each a one-line delegation. */
export function natsHandlers(subjects: NatsSubjects, requests: NatsRequestsService): NatsHandler[] {
  const serve = (subject: string, operation: Operation, shuttingDown: Uint8Array): NatsHandler => ({
    subject,
    operation,
    handle: (data, msg) => requests[operation](data, msg),
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
