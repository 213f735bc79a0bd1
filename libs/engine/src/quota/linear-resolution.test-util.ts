import type { QuotaSpec } from '../types';
import { compileKeyPattern, exactPattern, type KeyPattern } from './key-pattern';

/**
 * Quota resolution as the engine did it before its pattern index, kept as the reference the
 * index is checked against (tests) and measured beside (bench:match): exact keys, then every
 * pattern in rank order (longest literal prefix, then definition order) until one fits; an
 * entry with `merge` merges every entry that fits, in definition order. No cache.
 */
export function linearResolution(
  quotas: readonly QuotaSpec[],
): (key: string) => string | undefined {
  const exact = new Map<string, string>();
  const patterns: { pattern: KeyPattern; quota: QuotaSpec }[] = [];
  const merges = new Map<string, string>();
  for (const quota of quotas) {
    const { match, merge } = quota;
    if (merge !== undefined && Object.keys(merge).length > 0) {
      const id = JSON.stringify(Object.entries(merge).sort());
      if (!merges.has(id)) merges.set(id, quota.name);
    }
    if (match === undefined || match === '') continue;
    const plain = !match.startsWith('re:') && !match.includes('*');
    if (plain && merge === undefined) {
      if (!exact.has(match)) exact.set(match, quota.name);
      continue;
    }
    patterns.push({ pattern: plain ? exactPattern(match) : compileKeyPattern(match), quota });
  }
  const entries = patterns.filter((p) => p.quota.merge !== undefined);
  const ranked = [...patterns].sort((a, b) => b.pattern.prefixLength - a.pattern.prefixLength);
  const fallback = quotas.some((q) => q.name === 'default') ? 'default' : undefined;

  const merged = (key: string): string | undefined => {
    let last: string | undefined;
    const fields: Record<string, string> = {};
    for (const { pattern, quota } of entries) {
      if (!pattern.test(key)) continue;
      last = quota.name;
      Object.assign(fields, quota.merge);
    }
    const id = JSON.stringify(Object.entries(fields).sort());
    return (Object.keys(fields).length > 0 ? merges.get(id) : undefined) ?? last;
  };

  return (key) => {
    const exactly = exact.get(key);
    if (exactly !== undefined) return exactly;
    const found = ranked.find(({ pattern }) => pattern.test(key))?.quota;
    if (found === undefined) return fallback;
    return (found.merge !== undefined ? merged(key) : found.name) ?? fallback;
  };
}
