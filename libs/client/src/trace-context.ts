/**
 * W3C Trace Context for the limiter's spans: the `traceparent` of the caller's active span, when
 * the application uses OpenTelemetry. @opentelemetry/api is an optional peer: looked for on the
 * first call (never at load), and without it, or without an active span, nothing is sent.
 */

/** The part of @opentelemetry/api used here (its types are not a dependency of this package). */
interface SpanContextLike {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly traceState?: { serialize(): string } | undefined;
}

interface OtelApi {
  readonly context: { active(): unknown };
  readonly trace: {
    getSpanContext(context: unknown): SpanContextLike | undefined;
    isSpanContextValid(spanContext: SpanContextLike): boolean;
  };
}

/** The header names, as W3C Trace Context spells them. */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

/** undefined: not looked for yet; null: not installed. */
let api: OtelApi | null | undefined;

function otel(): OtelApi | null {
  if (api === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      api = require('@opentelemetry/api') as OtelApi;
    } catch {
      api = null;
    }
  }
  return api;
}

/** The trace context to send along, or undefined when there is no active span. */
export interface TraceHeaders {
  readonly traceparent: string;
  readonly tracestate: string | undefined;
}

export function activeTraceHeaders(): TraceHeaders | undefined {
  const otelApi = otel();
  if (otelApi === null) return undefined;
  const span = otelApi.trace.getSpanContext(otelApi.context.active());
  if (span === undefined || !otelApi.trace.isSpanContextValid(span)) return undefined;
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
  const state = span.traceState?.serialize();
  return {
    traceparent: `00-${span.traceId}-${span.spanId}-${flags}`,
    tracestate: state === undefined || state === '' ? undefined : state,
  };
}
