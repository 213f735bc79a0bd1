export const ROUNDS = 3;

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs `measure` for each peer in turn, ROUNDS times (alternating, so drift hits both alike). */
export async function rounds<T>(peers: (() => Promise<T>)[]): Promise<T[][]> {
  const results: T[][] = peers.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, measure] of peers.entries()) results[i]!.push(await measure());
  }
  return results;
}
