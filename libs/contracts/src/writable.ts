/** A readonly result type while it is being filled in. */
export type Writable<T> = { -readonly [K in keyof T]: T[K] };
