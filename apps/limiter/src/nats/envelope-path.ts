import { ThrottledLog } from '@app/logging';
import type { MessageHandler } from '@nestjs/microservices';
import type { Msg } from 'nats';
import { lastValueFrom, isObservable, of, type Observable } from 'rxjs';
import { logFailure } from './nats-log';
import { eventPattern, type NatsHandler } from './nats-handlers';
import type { NatsResponder } from './nats-responder';
import {
  envelopeError,
  envelopeReply,
  opensLikeEnvelope,
  payloadBytes,
  readEnvelope,
  type NestEnvelope,
} from './nest-envelope';

// Emitted (no reply) envelopes for an operation that is not an event: a bounded number of lines.
const unservedEvents = new ThrottledLog('NatsTransport', 'nats.event-unserved', 'warn');

/**
 * Requests sent through a Nest ClientProxy: the envelope's payload goes through the Nest handler
 * of the operation (guards, interceptors, pipes, filters as Nest applies them), and the reply goes
 * back in Nest's form. `send` is answered through the responder (owed until answered, cut at the
 * shutdown deadline like any reply); `emit` is an event: served by its @EventPattern, unanswered.
 */
export class EnvelopePath {
  constructor(
    private readonly responder: NatsResponder,
    private readonly nestHandler: (pattern: string) => MessageHandler | null,
  ) {}

  /** False when `msg` is not an envelope (the caller serves it as plain JSON). */
  served(handler: NatsHandler, msg: Msg): boolean {
    if (!opensLikeEnvelope(msg.data)) return false;
    const envelope = readEnvelope(msg.data, handler.subject);
    if (envelope === undefined) return false;
    if (this.responder.guard.refuses(msg)) return true; // neither served nor answered
    if (envelope.id === undefined) this.event(handler, envelope, msg);
    else this.request(handler, envelope, envelope.id, msg);
    return true;
  }

  private request(handler: NatsHandler, envelope: NestEnvelope, id: string, msg: Msg): void {
    const nest = this.nestHandler(handler.operation)!; // NatsTransport.listen checked them all
    const reply = run(nest, payloadBytes(envelope), msg).then(
      (bytes) => envelopeReply(id, bytes),
      (thrown: unknown) => envelopeError(id, thrown),
    );
    this.responder.deliver(msg, reply, () => envelopeReply(id, handler.shuttingDown));
  }

  private event(handler: NatsHandler, envelope: NestEnvelope, msg: Msg): void {
    const nest = this.nestHandler(eventPattern(handler.operation));
    if (nest === null) {
      unservedEvents.write(() => ({
        msg: `${handler.operation} sent as an event (emit) is not served: use send`,
        subject: msg.subject,
      }));
      return;
    }
    run(nest, payloadBytes(envelope), msg).catch((thrown: unknown) => logFailure(msg, thrown));
  }
}

/** Nest's handler (its pipeline) with the payload bytes and the message as its context. */
async function run(nest: MessageHandler, data: Uint8Array, msg: Msg): Promise<Uint8Array> {
  const out: unknown = await nest(data, msg);
  const value: unknown = await lastValueFrom(asObservable(out));
  if (!(value instanceof Uint8Array)) throw new Error('the handler did not answer reply bytes');
  return value;
}

function asObservable(value: unknown): Observable<unknown> {
  return isObservable(value) ? value : of(value);
}
