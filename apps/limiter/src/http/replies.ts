import {
  HEADERS,
  httpStatusForCode,
  invalidRequestReply,
  type ErrorReply,
  type ParseFailure,
} from '@app/contracts';
import type { Decision } from '@app/engine';
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse, OutgoingHttpHeaders } from 'node:http2';
import { logRefusal, type FieldRefusal } from './refusal-log';

export const TEXT = 'text/plain; charset=utf-8';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The hot routes (`/rate/:key`, `/v1/acquire`) write their answer on the raw response in one
 * `writeHead` with a flat header list: Fastify's reply pipeline (header objects, onSend, the
 * serializer) costs more than the decision itself. X-Correlation-ID, set on the raw response when
 * the request arrived, is merged in by Node. `headers` (the rate-limit headers, RateLimitHeaders)
 * is the list written, extended here.
 */
export function writeRaw(
  reply: FastifyReply,
  status: number,
  headers: string[],
  contentType: string | undefined,
  body: string,
): void {
  if (contentType !== undefined) headers.push('content-type', contentType);
  headers.push('content-length', String(Buffer.byteLength(body)));
  reply.hijack();
  // Fastify's types know HTTP/1.1 only; HTTP/2 requests arrive through H2cSessions.
  const raw = reply.raw as ServerResponse | Http2ServerResponse;
  // Shutdown answers a request still unanswered at the drain deadline itself (shutting-down.ts).
  if (raw.headersSent) return;
  if (isHttp2(raw)) return writeHttp2(raw, status, headers, body);
  raw.writeHead(status, headers);
  raw.end(body);
}

const CORRELATION_ID = HEADERS.correlationId.toLowerCase();

/**
 * The same answer on an HTTP/2 stream: its headers in one object straight to the stream, which
 * skips what Node's compatibility layer does per header on top of the stream's own checks
 * (`writeHead` with a list removes and re-validates every name), the largest cost of an h2c answer
 * after the stream itself; `end` still goes through the response, so its state says answered.
 */
function writeHttp2(
  response: Http2ServerResponse,
  status: number,
  list: string[],
  body: string,
): void {
  const stream = response.stream;
  if (stream.destroyed) return;
  const headers: OutgoingHttpHeaders = {
    ':status': status,
    [CORRELATION_ID]: response.getHeader(CORRELATION_ID),
  };
  for (let i = 0; i < list.length; i += 2) headers[list[i]!] = list[i + 1];
  stream.respond(headers);
  response.end(body);
}

function isHttp2(response: ServerResponse | Http2ServerResponse): response is Http2ServerResponse {
  return response.req.httpVersionMajor === 2;
}

/** `/v1/acquire`: the status from the code, the reply JSON as the body, the rate-limit headers. */
export function writeDecisionRaw(reply: FastifyReply, decision: Decision, headers: string[]): void {
  writeRaw(reply, httpStatusForCode(decision.code), headers, JSON_TYPE, JSON.stringify(decision));
}

/** The JSON API: the status from the code, the reply as the body. */
export function sendDecision(reply: FastifyReply, decision: Decision): void {
  reply.code(httpStatusForCode(decision.code)).send(decision);
}

export function sendText(reply: FastifyReply, status: number, text: string): void {
  reply.code(status).type(TEXT).send(text);
}

export function sendFailure(reply: FastifyReply, failure: ErrorReply): void {
  reply.code(httpStatusForCode(failure.code)).send(failure);
}

/** Bad input on GoCC's routes: the reason as text, naming the field; logged (rate-limited). */
export function refuseText(reply: FastifyReply, status: number, refusal: FieldRefusal): void {
  logRefusal(reply, status, refusal);
  sendText(reply, status, refusal.reason);
}

/** Bad input on the JSON API: `body` (a reply naming the field) with a 400; logged (rate-limited). */
export function refuseJson(reply: FastifyReply, body: unknown, refusal: FieldRefusal): void {
  logRefusal(reply, 400, refusal);
  reply.code(400).send(body);
}

/** Bad input on the JSON API answered `{ ok: false, code: INVALID_REQUEST, ... }`. */
export function refuseInvalid(reply: FastifyReply, failure: ParseFailure): void {
  refuseJson(reply, invalidRequestReply(failure), failure);
}
