import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ControlPublisher, type Restored } from './control';
import { errorMessage } from './control/error-message';
import { AdminStore } from './store';

/** The audit log's actor for what the admin does on its own. */
export const SYSTEM_ACTOR = 'system';
/** The audit action of a bucket put back over foreign writes. */
export const RESTORE_CONTROL_ACTION = 'restoreControl';

/**
 * SQLite is the source of truth; the KV bucket is its copy for the limiters. At start and after
 * every NATS reconnect the publisher makes the bucket equal to the store, so a change stored
 * while NATS was down, or a bucket lost with a NATS restart, still reaches every limiter. With
 * CONTROL_SEED it also does so within a second of a write it did not make, and each time the
 * audit log says what was found and what was put back (actor `system`).
 */
@Injectable()
export class ControlSync implements OnApplicationBootstrap {
  private readonly logger = new Logger('ControlSync');

  constructor(
    private readonly store: AdminStore,
    private readonly publisher: ControlPublisher,
  ) {}

  onApplicationBootstrap(): void {
    this.publisher.onRestored((restored) => void this.audit(restored));
    this.publisher.setSource(() => this.store.controlSet());
  }

  private async audit(restored: Restored): Promise<void> {
    const { found, foundCount, put, deleted } = restored;
    try {
      await this.store.record(
        SYSTEM_ACTOR,
        RESTORE_CONTROL_ACTION,
        this.publisher.bucketName,
        { foreignWrites: foundCount, found },
        { put, deleted },
      );
    } catch (error) {
      this.logger.error(`audit of a control bucket restore not written: ${errorMessage(error)}`);
    }
  }
}
