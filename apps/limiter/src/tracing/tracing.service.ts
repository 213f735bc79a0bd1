import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';
import type { AcquireTracer } from './acquire-tracer';
import type { otlpAcquireTracer } from './otlp-tracer';

interface OtlpTracerModule {
  readonly otlpAcquireTracer: typeof otlpAcquireTracer;
}

/**
 * Traces (docs/operations.md, Traces): with OTEL_EXPORTER_OTLP_ENDPOINT, `acquires` spans every
 * acquire and exports the spans over OTLP/HTTP; without it, `acquires` is undefined and the
 * OpenTelemetry SDK is never loaded (a require here, not an import, keeps it out of the graph).
 * At shutdown, after the transports have answered everyone, the spans still queued are sent.
 */
@Injectable()
export class Tracing implements OnApplicationShutdown {
  readonly acquires: AcquireTracer | undefined;
  private readonly log = new Logger('Tracing');

  constructor(@Inject(LIMITER_SETTINGS) settings: LimiterSettings) {
    const otlp = settings.otlp;
    if (otlp === undefined) return;
    // A literal path: the webpack bundle keeps the module, evaluated only by this call.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sdk = require('./otlp-tracer') as OtlpTracerModule;
    this.acquires = sdk.otlpAcquireTracer(otlp);
    this.log.log(`tracing acquires to ${otlp.tracesUrl} as ${otlp.serviceName}`);
  }

  async onApplicationShutdown(): Promise<void> {
    try {
      await this.acquires?.shutdown();
    } catch (error) {
      this.log.warn(`spans not exported at shutdown: ${String(error)}`);
    }
  }
}
