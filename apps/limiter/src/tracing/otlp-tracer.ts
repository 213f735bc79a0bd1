/**
 * The OpenTelemetry SDK behind AcquireTracer. Loaded by Tracing (tracing.service.ts) only when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set: nothing else in the limiter may import this file.
 */
import type { NormalisedAcquire } from '@app/contracts';
import type { Decision } from '@app/engine';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { OtlpSettings } from '../settings/limiter-settings';
import type { AcquireAnswer, AcquireTracer, AcquireTransport } from './acquire-tracer';
import { parseTraceparent } from './traceparent';

/** The span's name: one per acquire, whatever the transport. */
export const ACQUIRE_SPAN = 'ratelimit.acquire';

/**
 * Spans go out in batches (BatchSpanProcessor: a queue of 2048 finished spans at most, the
 * excess dropped, sent every 5 s or by 512; OTEL_BSP_* change these) as OTLP/HTTP JSON.
 */
export function otlpAcquireTracer(settings: OtlpSettings): AcquireTracer {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl }))],
  });
  const tracer = provider.getTracer('ratelimit-limiter');
  return {
    traced(traceparent, transport, input, acquire): AcquireAnswer {
      const parent = parseTraceparent(traceparent);
      // The caller did not sample its trace: no span (the SDK's parent-based sampler would
      // record none either), and none of its cost.
      if (parent !== undefined && (parent.traceFlags & TraceFlags.SAMPLED) === 0) return acquire();
      const span = tracer.startSpan(
        ACQUIRE_SPAN,
        { kind: SpanKind.SERVER, attributes: requestAttributes(transport, input) },
        parent === undefined
          ? ROOT_CONTEXT
          : trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true }),
      );
      let answer: AcquireAnswer;
      try {
        answer = acquire();
      } catch (thrown) {
        failed(span, thrown);
        throw thrown;
      }
      if (!(answer instanceof Promise)) return ended(span, answer);
      return answer.then(
        (decision) => ended(span, decision),
        (thrown: unknown) => {
          failed(span, thrown);
          throw thrown;
        },
      );
    },
    shutdown: () => provider.shutdown(),
  };
}

/** What the request asked: its transport, quota (if named), cost per unit and whether it waits. */
function requestAttributes(transport: AcquireTransport, input: NormalisedAcquire): Attributes {
  const attributes: Attributes = {
    'ratelimit.transport': transport,
    'ratelimit.wait': input.wait === true,
  };
  if (input.quota !== undefined) attributes['ratelimit.quota'] = input.quota;
  for (const unit of Object.keys(input.cost)) {
    attributes[`ratelimit.cost.${unit}`] = input.cost[unit];
  }
  return attributes;
}

/** The decision: the quota that decided, allowed, code, the binding limit and the time waited. */
function ended(span: Span, d: Decision): Decision {
  span.setAttributes({
    'ratelimit.quota': d.quota,
    'ratelimit.allowed': d.allowed,
    'ratelimit.code': d.code,
    'ratelimit.limit_name': d.limitName,
    'ratelimit.remaining': d.remaining,
    'ratelimit.retry_after_ms': d.retryAfterMs,
    'ratelimit.waited_ms': d.waitedMs,
    'ratelimit.shadow': d.shadow,
  });
  // A refusal is the limiter working; only an unavailable store or a draining replica is an error.
  if (d.code === 'UNAVAILABLE') {
    span.setStatus({ code: SpanStatusCode.ERROR, message: d.reason ?? d.code });
  }
  span.end();
  return d;
}

function failed(span: Span, thrown: unknown): void {
  span.recordException(thrown instanceof Error ? thrown : String(thrown));
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
