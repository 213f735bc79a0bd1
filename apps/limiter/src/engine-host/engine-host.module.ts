import { Global, Module } from '@nestjs/common';
import { LIMITER_SETTINGS, readLimiterSettings } from '../settings/limiter-settings';
import { LimiterService } from './limiter.service';
import { ReadinessService } from './readiness.service';
import { Tracing } from '../tracing/tracing.service';

/** The engine's single owner, the settings and the acquire tracer, shared by every transport. */
@Global()
@Module({
  providers: [
    { provide: LIMITER_SETTINGS, useFactory: () => readLimiterSettings() },
    LimiterService,
    ReadinessService,
    Tracing,
  ],
  exports: [LIMITER_SETTINGS, LimiterService, ReadinessService, Tracing],
})
export class EngineHostModule {}
