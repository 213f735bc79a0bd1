import type { NormalisedAcquire } from '@app/contracts';
import type { Decision } from '@app/engine';

/** Where an acquire came from: a span attribute. */
export type AcquireTransport = 'http' | 'nats';

export type AcquireAnswer = Decision | Promise<Decision>;

/**
 * A span per acquire (docs/operations.md, Traces). Only this interface is known to the transports:
 * the OpenTelemetry SDK behind it (otlp-tracer.ts) is loaded when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set, never otherwise, and a transport without a tracer pays one `undefined` check per request.
 */
export interface AcquireTracer {
  /**
   * Runs `acquire` inside a span, a child of `traceparent` (a W3C header's value) when that is
   * valid, and ends it with the decision, once the acquire is answered (after its wait).
   */
  traced(
    traceparent: string | undefined,
    transport: AcquireTransport,
    input: NormalisedAcquire,
    acquire: () => AcquireAnswer,
  ): AcquireAnswer;
  /** Exports the spans still queued, then stops. */
  shutdown(): Promise<void>;
}
