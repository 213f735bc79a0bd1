import {
  invalidAcquireReply,
  parseAcquire,
  parseBatch,
  parseDecide,
  parseJsonBody,
  parseReleaseJson,
  parseStats,
  parseUsageJson,
  type AcquireReply,
  type BatchReply,
  type ParseFailure,
  type ReleaseReply,
  type UsageReply,
} from '@app/contracts';
import type { KeyStats } from '@app/engine';
import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimiterService } from '../engine-host/limiter.service';
import type { AcquireTracer } from '../tracing/acquire-tracer';
import { Tracing } from '../tracing/tracing.service';
import { whenDone, type MaybeAsync } from '../engine-host/maybe-async';
import { abortWhenClientLeaves } from './client-gone';
import { failureReply } from '../engine-host/failure-reply';
import { RateLimitHeaders } from './rate-limit-headers';
import { logRefusal } from './refusal-log';
import { traceparentOf } from './traceparent-header';
import { refuseInvalid, refuseJson, sendDecision, sendFailure, writeDecisionRaw } from './replies';
import type { JsonRoute, RawBody, StatsRoute } from './route-types';

const NO_BODY = '';

/**
 * The JSON API (`/v1/*`, docs/contract.md, HTTP): the status from the reply's code (200, 429, 400,
 * 404, 503) and the reply JSON as the body, whatever happened.
 */
@Injectable()
export class ApiHttpService {
  /** Set only with OTEL_EXPORTER_OTLP_ENDPOINT: a span per acquire. */
  private readonly tracer: AcquireTracer | undefined;

  constructor(
    private readonly limiter: LimiterService,
    private readonly headers: RateLimitHeaders,
    tracing: Tracing,
  ) {
    this.tracer = tracing.acquires;
  }

  /** `POST /v1/acquire`; a request with `wait: true` is answered when admitted or refused. */
  acquire(request: FastifyRequest<JsonRoute>, reply: FastifyReply): void | Promise<void> {
    const input = parseAcquireBody(request.body, parseAcquire);
    if (!input.ok) return refuseJson(reply, input.reply, input.failure);
    const value = input.value;
    const signal = value.wait === true ? abortWhenClientLeaves(reply.raw) : undefined;
    const answer =
      this.tracer === undefined
        ? this.limiter.acquire(value, signal)
        : this.tracer.traced(traceparentOf(request), 'http', value, () =>
            this.limiter.acquire(value, signal),
          );
    if (answer instanceof Promise) {
      return answer.then((decision) =>
        writeDecisionRaw(reply, decision, this.headers.of(decision)),
      );
    }
    writeDecisionRaw(reply, answer, this.headers.of(answer));
  }

  /** `POST /v1/decide`: as acquire would answer, charging nothing and never waiting. */
  decide(request: FastifyRequest<JsonRoute>, reply: FastifyReply): void | Promise<void> {
    const input = parseAcquireBody(request.body, parseDecide);
    if (!input.ok) return refuseJson(reply, input.reply, input.failure);
    const answer = this.limiter.decide(input.value);
    if (answer instanceof Promise) return answer.then((decision) => sendDecision(reply, decision));
    sendDecision(reply, answer);
  }

  /**
   * `POST /v1/acquire/batch`: 200 with one reply per entry, in order, each with its own code;
   * 400 only when the envelope itself is wrong.
   */
  batch(request: FastifyRequest<JsonRoute>, reply: FastifyReply): void | Promise<void> {
    const json = parseJsonBody(request.body ?? NO_BODY);
    const entries = json.ok ? parseBatch(json.value) : json;
    if (!entries.ok) return refuseInvalid(reply, entries);
    const raw = rawEntries(json.ok ? json.value : undefined);
    let firstRefused: ParseFailure | undefined;
    const replies = this.limiter.batch(entries.value, (failure, i) => {
      firstRefused ??= failure;
      return invalidAcquireReply(failure, raw[i]);
    });
    // One line per batch, naming its first bad entry: the batch itself is answered 200.
    if (firstRefused !== undefined) logRefusal(reply, 200, firstRefused);
    const send = (all: BatchReply['replies']): void => {
      reply.code(200).send({ replies: all } satisfies BatchReply);
    };
    if (replies instanceof Promise) return replies.then(send);
    send(replies);
  }

  /** `POST /v1/release` → `{ released }`; unknown ids answer `released: false`. */
  release(request: FastifyRequest<JsonRoute>, reply: FastifyReply): MaybeAsync<void> {
    const input = parseReleaseJson(request.body ?? NO_BODY);
    if (!input.ok) return refuseInvalid(reply, input);
    return whenDone(this.limiter.release(input.value), (outcome) => {
      if (!outcome.ok) return sendFailure(reply, failureReply(outcome));
      const body: ReleaseReply = { released: outcome.value };
      reply.code(200).send(body);
    });
  }

  /** `POST /v1/usage` → `{ ok: true, usage }`. */
  usage(request: FastifyRequest<JsonRoute>, reply: FastifyReply): MaybeAsync<void> {
    const input = parseUsageJson(request.body ?? NO_BODY);
    if (!input.ok) return refuseInvalid(reply, input);
    return whenDone(this.limiter.usage(input.value), (outcome) => {
      if (!outcome.ok) return sendFailure(reply, failureReply(outcome));
      const body: UsageReply = { ok: true, usage: outcome.value };
      reply.code(200).send(body);
    });
  }

  /** `GET /v1/stats/:key?quota=` → KeyStats. */
  stats(request: FastifyRequest<StatsRoute>, reply: FastifyReply): MaybeAsync<void> {
    const { quota } = request.query;
    const input = parseStats(
      quota === undefined ? { key: request.params.key } : { key: request.params.key, quota },
    );
    if (!input.ok) return refuseInvalid(reply, input);
    return whenDone(this.limiter.stats(input.value), (outcome) => {
      if (!outcome.ok) return sendFailure(reply, failureReply(outcome));
      const body: KeyStats = outcome.value;
      reply.code(200).send(body);
    });
  }
}

type ParsedAcquire =
  | { readonly ok: true; readonly value: Parameters<LimiterService['acquire']>[0] }
  | { readonly ok: false; readonly reply: AcquireReply; readonly failure: ParseFailure };

/** Parses a body as an AcquireRequest, keeping the raw JSON so a refusal can echo its ids. */
function parseAcquireBody(body: RawBody, parse: typeof parseAcquire): ParsedAcquire {
  const json = parseJsonBody(body ?? NO_BODY);
  if (!json.ok) return { ok: false, reply: invalidAcquireReply(json, undefined), failure: json };
  const input = parse(json.value);
  if (input.ok) return input;
  return { ok: false, reply: invalidAcquireReply(input, json.value), failure: input };
}

function rawEntries(envelope: unknown): readonly unknown[] {
  const requests: unknown =
    typeof envelope === 'object' && envelope !== null
      ? (envelope as { requests?: unknown }).requests
      : undefined;
  return Array.isArray(requests) ? requests : [];
}
