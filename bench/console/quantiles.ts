/** The q-quantile of ascending `sorted` by nearest rank (p50 of 15 values is the 8th); NaN if empty. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

export function ascending(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

export const kB = (bytes: number): string => `${(bytes / 1024).toFixed(1)} kB`;
export const MB = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
