/** Work of one event-loop turn at most this long when a long read is paced. */
export const TURN_MS = 10;

/**
 * Paces a long read on the event loop (a bucket's replay: each entry parsed and its signature
 * checked): `pace()` ends the turn once `ms` of work went by since the turn began, so the admin
 * keeps answering meanwhile.
 */
export class Turns {
  private started = performance.now();

  constructor(private readonly ms = TURN_MS) {}

  async pace(): Promise<void> {
    if (performance.now() - this.started <= this.ms) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.started = performance.now();
  }
}
