import {
  Injectable,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { ConfigLoaderService } from './config/config-loader.service';
import { PersistenceService } from './persistence/persistence.service';

/**
 * The order of operations at start and stop. Start: the config's quotas first, then the stored
 * usage (restore only fills quotas that exist). Stop: no more reloads; once the engine host has
 * answered every waiter (its onModuleDestroy), the last write.
 */
@Injectable()
export class OpsService implements OnModuleInit, OnModuleDestroy, OnApplicationShutdown {
  constructor(
    private readonly config: ConfigLoaderService,
    private readonly persistence: PersistenceService,
  ) {}

  onModuleInit(): void {
    this.config.start();
    this.persistence.start();
    this.config.onApplied(() => this.persistence.restorePending());
  }

  onModuleDestroy(): void {
    this.config.stop();
  }

  onApplicationShutdown(): void {
    this.persistence.stop();
  }
}
