import type { ServerResponse } from 'node:http';

/**
 * Aborts when the connection (or HTTP/2 stream) closes before the answer was given: the client
 * hung up while its request waited, so it leaves the queue. The response's 'close' is used rather
 * than the request's, which fires as soon as the request body has been read; `writableEnded`
 * (the answer was given) rather than `writableFinished`, which an HTTP/2 stream reset by the
 * client reports as true.
 */
export function abortWhenClientLeaves(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableEnded) controller.abort();
  });
  return controller.signal;
}
