/** A result that is there at once (in-process quotas) or later (quotas decided in Redis). */
export type MaybeAsync<T> = T | Promise<T>;

/** Runs `then` on the result now when it is there, later when it is a promise. */
export function whenDone<T, R>(value: MaybeAsync<T>, then: (value: T) => R): MaybeAsync<R> {
  return value instanceof Promise ? value.then(then) : then(value);
}
