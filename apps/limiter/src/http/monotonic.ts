/** Milliseconds on a clock that only moves forward, whatever the wall clock does. */
export type Clock = () => number;

/**
 * performance.now(): the HTTP bounds are durations, so a wall clock stepped back (NTP, a VM
 * restored) must not pause them, nor one stepped forward fire them early.
 */
export const monotonicNow: Clock = () => performance.now();
