/**
 * Calls `work` for every item with at most `limit` calls in flight, and resolves when all have
 * finished. The first failure stops new calls and rejects (once the calls in flight settle).
 * JetStream answers each KV write in a round trip: one at a time, 30 000 writes took seconds.
 */
export async function inWindows<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const runner = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const runners = Array.from({ length: Math.min(limit, items.length) }, runner);
  const outcomes = await Promise.allSettled(runners);
  const failure = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
}
