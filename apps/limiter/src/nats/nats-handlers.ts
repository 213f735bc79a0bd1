import type { NatsSubjects } from '@app/contracts';
import type { NatsReply, NatsRequestsService } from './nats-requests.service';

export interface NatsHandler {
  readonly subject: string;
  readonly handle: (data: Uint8Array) => NatsReply;
}

/** The request-reply subjects of CONTRACT.md section 3, each a one-line delegation. */
export function natsHandlers(subjects: NatsSubjects, requests: NatsRequestsService): NatsHandler[] {
  return [
    { subject: subjects.acquire, handle: (data) => requests.acquire(data) },
    { subject: subjects.acquireBatch, handle: (data) => requests.batch(data) },
    { subject: subjects.decide, handle: (data) => requests.decide(data) },
    { subject: subjects.release, handle: (data) => requests.release(data) },
    { subject: subjects.usage, handle: (data) => requests.usage(data) },
    { subject: subjects.stats, handle: (data) => requests.stats(data) },
  ];
}
