import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Runs tasks one at a time, in arrival order, each on a turn of the event loop of its own. For
 * work a client may ask for many times at once: an h2c packet can open 128 streams of
 * `GET /debug?limit=1000`, whose pages would otherwise be built side by side, in one turn of the
 * loop (seconds with no timer, no other client served) and all in memory at once.
 */
export class OneAtATime {
  private tail: Promise<unknown> = Promise.resolve();

  /** `task`'s result, once the tasks queued before it have run. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(() => nextTurn()).then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
