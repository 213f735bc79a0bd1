import { Global, Module } from '@nestjs/common';
import { LIMITER_SETTINGS, readLimiterSettings } from '../settings/limiter-settings';
import { LimiterService } from './limiter.service';
import { ReadinessService } from './readiness.service';

/** The engine's single owner and the settings, shared by every transport. */
@Global()
@Module({
  providers: [
    { provide: LIMITER_SETTINGS, useFactory: () => readLimiterSettings() },
    LimiterService,
    ReadinessService,
  ],
  exports: [LIMITER_SETTINGS, LimiterService, ReadinessService],
})
export class EngineHostModule {}
