import { Logger } from '@nestjs/common';
import type { Msg, NatsError } from 'nats';
import { INTERNAL_ERROR_REPLY } from './nats-codec';
import { logFailure, logReplyFailure } from './nats-log';
import type { NatsReply } from './nats-requests.service';
import type { ReplyGuard } from './reply-guard';

/** The reply a message still owed at the shutdown deadline gets. */
export type Cut = Uint8Array | (() => Uint8Array);

/**
 * Turns an operation into a subscription callback that answers every message exactly once, and
 * keeps track of replies still owed (waiters), so that shutdown can publish them before draining.
 * A message without a reply subject is served (a published release or usage record still counts)
 * and simply not answered. A message whose reply subject the guard refuses is neither served nor
 * answered.
 */
export class NatsResponder {
  private readonly logger = new Logger('NatsResponder');
  /** Replies still owed, with what each is answered if shutdown cannot wait for it. */
  private readonly owed = new Map<Msg, { readonly done: Promise<void>; readonly cut: Cut }>();

  /**
   * `failureReply` answers a message whose handler failed (the control plane has its own shape);
   * `guard` keeps answers off the subjects the limiter must never publish on.
   */
  constructor(
    readonly guard: ReplyGuard,
    private readonly failureReply: Uint8Array = INTERNAL_ERROR_REPLY,
  ) {}

  /**
   * `shuttingDown` is the reply, in the operation's shape, that `answerOwed` gives a message still
   * unanswered at the shutdown deadline. The operation gets the message itself so that it reads
   * headers only if it needs them (a refusal's log line): decoding them costs every request.
   */
  callback(
    operation: (data: Uint8Array, msg: Msg) => NatsReply,
    shuttingDown: Uint8Array = this.failureReply,
  ): (error: NatsError | null, msg: Msg) => void {
    return (error: NatsError | null, msg: Msg) => {
      if (error !== null) {
        this.logger.error(`subscription error: ${error.message}`);
        return;
      }
      if (this.guard.refuses(msg)) return;
      let reply: NatsReply;
      try {
        reply = operation(msg.data, msg);
      } catch (thrown) {
        logFailure(msg, thrown);
        reply = this.failureReply;
      }
      this.deliver(msg, reply, shuttingDown);
    };
  }

  /**
   * Answers `msg` with `reply` now, or when it settles (owed until then; `cut` at the deadline,
   * made only then when it is a function).
   */
  deliver(msg: Msg, reply: NatsReply, cut: Cut): void {
    if (reply instanceof Promise) this.answerLater(msg, reply, cut);
    else this.answer(msg, reply);
  }

  /** Replies still owed right now (acquires that wait). */
  get owedCount(): number {
    return this.owed.size;
  }

  /** Resolves when every owed reply has been published, or after `timeoutMs`. */
  async settled(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.all([...this.owed.values()].map((o) => o.done)), timeout]);
    clearTimeout(timer);
  }

  /**
   * Shutdown's deadline: every reply still owed is answered now, in its operation's shape
   * (UNAVAILABLE), and its own answer, should it come later, is dropped: still one reply each.
   */
  answerOwed(): void {
    for (const [msg, { cut }] of this.owed) {
      this.owed.delete(msg);
      this.answer(msg, typeof cut === 'function' ? cut() : cut);
    }
  }

  private answerLater(msg: Msg, reply: Promise<Uint8Array>, cut: Cut): void {
    const done = reply
      .catch((thrown: unknown) => {
        logFailure(msg, thrown);
        return this.failureReply;
      })
      .then((bytes) => {
        if (this.owed.delete(msg)) this.answer(msg, bytes);
      });
    this.owed.set(msg, { done, cut });
  }

  private answer(msg: Msg, bytes: Uint8Array): void {
    if (msg.reply === undefined || msg.reply === '') return;
    try {
      msg.respond(bytes);
    } catch (thrown) {
      // closed or draining connection: the requester times out, as it would if we had crashed
      logReplyFailure(msg, thrown);
    }
  }
}
