import type { ServerResponse } from 'node:http';

/**
 * Aborts when the connection closes before the answer was written: the client hung up while its
 * request waited, so it leaves the queue. The response's 'close' is used rather than the
 * request's, which fires as soon as the request body has been read.
 */
export function abortWhenClientLeaves(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  return controller.signal;
}
