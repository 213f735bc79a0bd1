/**
 * The clock port. The engine itself never reads time: every operation takes `now` (epoch ms).
 * Hosts read a Clock once per operation and pass the value in; tests pass a virtual clock.
 * Contract: `now()` returns integer epoch milliseconds; it may step backwards (NTP), and the
 * engine then treats time as standing still for state already written later.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock moved by hand, for tests and simulations. */
export class VirtualClock implements Clock {
  constructor(private t: number = 0) {}
  now(): number {
    return this.t;
  }
  set(t: number): void {
    this.t = t;
  }
  advance(ms: number): number {
    this.t += ms;
    return this.t;
  }
}
