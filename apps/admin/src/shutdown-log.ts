import { flushThrottledLogs, type LogFields } from '@app/logging';
import { Injectable, Logger } from '@nestjs/common';
import { ControlPublisher, NatsConnectionService } from './control';

/**
 * The one line at shutdown (docs/operations.md, "Logs"): the control bucket writes shutdown waited
 * for, whether every change stored is published, how the NATS connection ended, and how long it
 * took from the signal. main.ts begins it at the signal and writes it when the process exits.
 */
@Injectable()
export class ShutdownLog {
  private readonly logger = new Logger('Admin');
  private startedAt: number | undefined;

  constructor(
    private readonly publisher: ControlPublisher,
    private readonly nats: NatsConnectionService,
  ) {}

  begin(): void {
    this.startedAt ??= performance.now();
  }

  write(exitCode: number): void {
    flushThrottledLogs();
    if (this.startedAt === undefined) return;
    const drainMs = Math.round(performance.now() - this.startedAt);
    const writes = this.publisher.drained ?? { queued: 0, left: 0 };
    const nats = this.nats.enabled ? (this.nats.ended ?? 'not connected') : 'disabled';
    const unpublished = this.publisher.pending;
    this.logger.log({
      msg:
        `shut down in ${drainMs} ms: ${writes.queued} control writes waited for ` +
        `(${writes.left} unfinished), ${unpublished ? 'some changes not' : 'every change'} ` +
        `published, NATS ${nats}`,
      drainMs,
      controlWrites: writes.queued,
      controlWritesLeft: writes.left,
      unpublished,
      nats,
      exitCode,
    } satisfies LogFields);
  }
}
