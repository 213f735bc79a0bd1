/** How long until a window resets, to the precision an operator needs: `45s`, `4m 05s`, `3h 20m`. */
export function resetIn(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return 'now';
  if (ms < 1_000) return `${Math.ceil(ms)}ms`;
  const seconds = Math.ceil(ms / 1_000);
  if (seconds < 60) return `${seconds}s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m ${pad(seconds % 60)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 1_440) return `${Math.floor(minutes / 60)}h ${pad(minutes % 60)}m`;
  const hours = Math.floor(minutes / 60);
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}
