import { Module } from '@nestjs/common';
import { ControlModule } from '../control/control.module';
import { ConfigLoaderService } from './config/config-loader.service';
import { MetricsController } from './metrics/metrics.controller';
import { MetricsService } from './metrics/metrics.service';
import { OpsService } from './ops.service';
import { PersistenceService } from './persistence/persistence.service';

/** Operations: CONFIG_FILE (watched), usage persisted under DATA_DIR, GET /metrics. */
@Module({
  imports: [ControlModule],
  controllers: [MetricsController],
  providers: [ConfigLoaderService, PersistenceService, MetricsService, OpsService],
  exports: [PersistenceService],
})
export class OpsModule {}
