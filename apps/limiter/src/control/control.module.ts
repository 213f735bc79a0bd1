import { Module } from '@nestjs/common';
import { NatsModule } from '../nats/nats.module';
import { ControlService } from './control.service';
import { QuotaLayersService } from './quota-layers.service';

/**
 * The admin control plane seen from a limiter: the admin's quotas and provider profiles layered
 * over the config, stats reports, and the admin's per-key questions. OpsService starts and stops
 * it, so that the stored control set is in force before the config file and stored usage load.
 */
@Module({
  imports: [NatsModule],
  providers: [QuotaLayersService, ControlService],
  exports: [QuotaLayersService, ControlService],
})
export class ControlModule {}
