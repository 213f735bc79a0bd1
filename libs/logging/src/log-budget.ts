/**
 * How many lines of one kind may be written: at most `perWindow` in a window of `windowMs` that
 * starts with the first line after the previous window ended. Lines past that are counted, and
 * the count is handed to `onSuppressed` once, when their window ends (a timer that does not hold
 * the process), or at `flush`. So a window writes at most perWindow + 1 lines, and a flood of
 * bad requests a bounded number per second, whatever its rate.
 */
export class LogBudget {
  private windowEnd = -Infinity;
  private used = 0;
  private suppressed = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly perWindow: number,
    private readonly windowMs: number,
    private readonly onSuppressed: (count: number) => void,
  ) {}

  /** True when a line may be written now; false when it is only counted. */
  take(): boolean {
    // The monotonic clock: a wall clock set back would hold a window open until it caught up.
    const now = performance.now();
    if (now >= this.windowEnd) {
      this.flush();
      this.windowEnd = now + this.windowMs;
      this.used = 0;
    }
    if (this.used < this.perWindow) {
      this.used++;
      return true;
    }
    if (this.suppressed++ === 0) {
      this.timer = setTimeout(() => this.flush(), this.windowEnd - now);
      this.timer.unref();
    }
    return false;
  }

  /** Hands over the count of lines suppressed so far, if any (shutdown calls it). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.suppressed === 0) return;
    const count = this.suppressed;
    this.suppressed = 0;
    this.onSuppressed(count);
  }
}
