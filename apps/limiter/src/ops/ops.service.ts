import {
  Injectable,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { ControlService } from '../control/control.service';
import { QuotaLayersService } from '../control/quota-layers.service';
import { ConfigLoaderService } from './config/config-loader.service';
import { PersistenceService } from './persistence/persistence.service';

/**
 * The order of operations at start and stop. Start: the admin's control set stored under DATA_DIR
 * and the config's quotas first, then the stored usage (restore only fills quotas that exist).
 * Stop: no more reloads or control changes; once the engine host has answered every waiter (its
 * onModuleDestroy), the last write.
 */
@Injectable()
export class OpsService implements OnModuleInit, OnModuleDestroy, OnApplicationShutdown {
  constructor(
    private readonly config: ConfigLoaderService,
    private readonly persistence: PersistenceService,
    private readonly control: ControlService,
    private readonly layers: QuotaLayersService,
  ) {}

  async onModuleInit(): Promise<void> {
    this.control.start();
    this.config.start();
    // Either layer may bring back a quota whose usage was stored before the restart.
    this.layers.onApplied(() => this.persistence.restorePending());
    // Before NATS subscribes and HTTP listens (after every module is initialised).
    await this.persistence.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.config.stop();
    await this.control.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.persistence.stop();
  }
}
