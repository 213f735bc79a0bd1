/**
 * Which failure reasons were logged since a connection was last up, so each is logged once per
 * outage: a server that refuses this app is a state, not a stream of errors. Reasons that
 * alternate between retries (refused, then timed out) are still one line each, not one a retry.
 * Bounded: a reason may carry a changing detail.
 */
export class OncePerOutage {
  private readonly logged = new Set<string>();

  constructor(private readonly maxReasons = 16) {}

  /** True the first time `reason` is seen in this outage: log it then. */
  firstTime(reason: string): boolean {
    if (this.logged.has(reason) || this.logged.size >= this.maxReasons) return false;
    this.logged.add(reason);
    return true;
  }

  /** The connection is up: the next outage logs its reasons again. */
  up(): void {
    this.logged.clear();
  }
}
