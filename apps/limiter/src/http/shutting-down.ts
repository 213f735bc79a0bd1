import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
import {
  SHUTTING_DOWN,
  SHUTTING_DOWN_REPLY,
  shuttingDownDecision,
} from '../engine-host/shutting-down';
import { ACQUIRE_SHAPED, isGoccPath } from './http-errors';

/** A response of either protocol the port serves. */
export type AnyResponse = ServerResponse | Http2ServerResponse;

/**
 * The 503 a request gets when shutdown has to answer it itself (its body still arriving at the
 * drain deadline, say), in its route's shape (docs/contract.md, HTTP): an AcquireReply on
 * `/v1/acquire` and `/v1/decide`, text on GoCC's routes, `{ ok: false, ... }` elsewhere.
 */
export function answerShuttingDown(response: AnyResponse): void {
  if (response.headersSent) return;
  const path = (response.req.url ?? '').split('?', 1)[0]!;
  let type = 'application/json; charset=utf-8';
  let body: string;
  if (isGoccPath(path)) {
    type = 'text/plain; charset=utf-8';
    body = SHUTTING_DOWN;
  } else {
    body = JSON.stringify(ACQUIRE_SHAPED.has(path) ? shuttingDownDecision() : SHUTTING_DOWN_REPLY);
  }
  if ('shouldKeepAlive' in response) response.shouldKeepAlive = false;
  response.writeHead(503, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'retry-after': '1',
  });
  response.end(body);
}
