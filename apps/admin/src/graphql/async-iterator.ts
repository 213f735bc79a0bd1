import type { Observable, Subscription } from 'rxjs';

/** Buffered beyond this, a slow subscriber loses the oldest values rather than the admin memory. */
const MAX_BUFFERED = 100;

/**
 * An rxjs stream as the AsyncIterator GraphQL subscriptions consume. Unsubscribes when the
 * client leaves (return()), so a closed WebSocket leaves nothing running.
 */
export function asyncIterator<T>(source: Observable<T>): AsyncIterableIterator<T> {
  const buffered: T[] = [];
  const waiting: ((r: IteratorResult<T>) => void)[] = [];
  let done = false;
  const holder: { subscription?: Subscription } = {};
  const finish = (): void => {
    done = true;
    holder.subscription?.unsubscribe();
    for (const resolve of waiting.splice(0)) resolve({ value: undefined, done: true });
  };
  const subscription = source.subscribe({
    next: (value) => {
      const resolve = waiting.shift();
      if (resolve !== undefined) resolve({ value, done: false });
      else {
        buffered.push(value);
        if (buffered.length > MAX_BUFFERED) buffered.shift();
      }
    },
    complete: finish,
    error: finish,
  });
  holder.subscription = subscription;
  if (done) subscription.unsubscribe();
  const iterator: AsyncIterableIterator<T> = {
    next: () => {
      const value = buffered.shift();
      if (value !== undefined) return Promise.resolve({ value, done: false });
      if (done) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => waiting.push(resolve));
    },
    return: () => {
      finish();
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
