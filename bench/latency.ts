/**
 * Runs `once` back to back until `stop` resolves, as one client would; the time of each call in
 * ms, sorted. A call that throws counts as Infinity (it was never answered).
 */
export async function latenciesUntil(
  stop: Promise<unknown>,
  once: () => Promise<unknown>,
): Promise<number[]> {
  let stopped = false;
  void stop.finally(() => (stopped = true));
  const samples: number[] = [];
  while (!stopped) {
    const started = performance.now();
    const answered = await once().then(
      () => true,
      () => false,
    );
    samples.push(answered ? performance.now() - started : Infinity);
  }
  return samples.sort((a, b) => a - b);
}
