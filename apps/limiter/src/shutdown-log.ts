import { flushThrottledLogs, type LogFields } from '@app/logging';
import { Injectable, Logger } from '@nestjs/common';
import { LimiterService } from './engine-host/limiter.service';
import { HttpServerService } from './http/http-server.service';
import { NatsTransport } from './nats/nats-transport.service';
import { PersistenceService } from './ops/persistence/persistence.service';

/**
 * The one line at shutdown (docs/operations.md, "Logs"): what the drain answered and wrote, and
 * how long it took from the signal. main.ts writes it when the process exits, after every
 * shutdown hook; a process that never began to drain writes none.
 */
@Injectable()
export class ShutdownLog {
  private readonly logger = new Logger('Limiter');

  constructor(
    private readonly limiter: LimiterService,
    private readonly http: HttpServerService,
    private readonly nats: NatsTransport,
    private readonly persistence: PersistenceService,
  ) {}

  write(exitCode: number): void {
    flushThrottledLogs();
    const start = this.limiter.drained;
    if (start === undefined) return;
    const http = this.http.drained;
    const nats = this.nats.drained;
    // Undefined when shutdown failed before the last write (Nest then exits 1).
    const usage = this.persistence.lastWrite ?? { outcome: 'unfinished', rows: 0 };
    const drainMs = Math.round(performance.now() - start.startedAt);
    const inFlight = http.inFlight + nats.inFlight;
    const cut = http.cut + nats.cut;
    this.logger.log({
      msg:
        `drained in ${drainMs} ms: ${inFlight} requests in flight answered (${cut} at the ` +
        `deadline), ${start.waiters} waiters answered, ${usage.rows} usage rows written`,
      drainMs,
      httpInFlight: http.inFlight,
      natsInFlight: nats.inFlight,
      cutAtDeadline: cut,
      waiters: start.waiters,
      usageRows: usage.rows,
      usageWrite: usage.outcome,
      exitCode,
    } satisfies LogFields);
  }
}
