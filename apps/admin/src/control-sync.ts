import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ControlPublisher } from './control';
import { AdminStore } from './store';

/**
 * SQLite is the source of truth; the KV bucket is its copy for the limiters. At start and after
 * every NATS reconnect the publisher makes the bucket equal to the store, so a change stored
 * while NATS was down, or a bucket lost with a NATS restart, still reaches every limiter.
 */
@Injectable()
export class ControlSync implements OnApplicationBootstrap {
  constructor(
    private readonly store: AdminStore,
    private readonly publisher: ControlPublisher,
  ) {}

  onApplicationBootstrap(): void {
    this.publisher.setSource(() => this.store.controlSet());
  }
}
