/**
 * What every algorithm's `stateProblem` asks of a number read from outside the engine (a stored
 * row): checks that name the field, so a refused row says why.
 */

/** A count the engine keeps: a finite integer >= 0. */
export function isCount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/** An instant (epoch ms) or a sub-bucket number the engine wrote: an integer from 0 to `max`. */
export function isIntegerUpTo(n: number, max: number): boolean {
  return Number.isSafeInteger(n) && n >= 0 && n <= max;
}

/** The latest instant a Date holds (ECMAScript's time range): no clock reads later. */
export const MAX_INSTANT = 8.64e15;

/**
 * An instant the engine wrote (epoch ms, an integer). It may be later than now: a clock that was
 * ahead when the row was written, brought back to now by `sync` like live state after a step.
 */
export function isInstant(n: number): boolean {
  return isIntegerUpTo(n, MAX_INSTANT);
}
