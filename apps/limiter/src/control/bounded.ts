/**
 * Every wait of the control plane is bounded: a NATS call that hangs (a server restarting, a
 * JetStream that is not there) must not stall the watcher or shutdown.
 */

export class TimeoutError extends Error {}

/**
 * `work`, or a TimeoutError after `ms`. Work that completes after the timeout is handed to
 * `discard` (an iterator opened too late is stopped rather than leaked).
 */
export function within<T>(
  work: Promise<T>,
  ms: number,
  what: string,
  discard: (late: T) => void = () => undefined,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new TimeoutError(`${what}: no answer within ${ms} ms`));
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (late) discard(value);
        else resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!late) reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** A delay that can be cut short (shutdown, a new connection to follow). */
export class Pause {
  private wakeUp: (() => void) | undefined;

  wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wakeUp === done) this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }

  wake(): void {
    this.wakeUp?.();
  }
}
