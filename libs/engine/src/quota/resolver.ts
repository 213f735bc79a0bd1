import { InvalidQuotaError } from '../errors';
import type { CompiledQuota } from './compile';
import { compileKeyPattern, type KeyPattern } from './key-pattern';

interface Matcher {
  readonly quota: CompiledQuota;
  readonly pattern: KeyPattern;
}

/** A quota's `merge` as one string: equal records, equal strings. */
function mergeId(merge: Readonly<Record<string, string>>): string {
  return Object.keys(merge)
    .sort()
    .map((field) => `${field}\u0000${merge[field]}`)
    .join('\u0001');
}

const CACHE_LIMIT = 10_000;

/**
 * Quota resolution (docs/contract.md, Concepts): the named quota; else the quota whose `match` fits
 * the key, the longest literal prefix winning (ties: first defined); else `default`. Entries of a
 * GoCC file (quotas with `match` and `merge`) merge instead: when one wins, every entry that fits
 * the key is laid over the others in definition order, and the quota with that `merge` decides.
 */
export class QuotaResolver {
  private readonly byName = new Map<string, CompiledQuota>();
  private readonly exact = new Map<string, CompiledQuota>();
  private readonly patterns: Matcher[] = [];
  /** Compiled patterns by `match`, handed to the next resolver so a change compiles only what changed. */
  private readonly compiled = new Map<string, KeyPattern>();
  private readonly cache = new Map<string, CompiledQuota | undefined>();
  /** Quotas with `match` and `merge`, in definition order. */
  private readonly entries: Matcher[] = [];
  /** Every quota with a non-empty `merge`, by mergeId. */
  private readonly merges = new Map<string, CompiledQuota>();

  /** `previous`: the resolver this one replaces; its compiled patterns are reused. */
  constructor(quotas: readonly CompiledQuota[], previous?: QuotaResolver) {
    for (const q of quotas) {
      this.byName.set(q.name, q);
      const merge = q.spec.merge;
      if (merge !== undefined && Object.keys(merge).length > 0) {
        const id = mergeId(merge);
        if (!this.merges.has(id)) this.merges.set(id, q);
      }
      const match = q.spec.match;
      if (match === undefined || match === '') continue;
      const plain = !match.startsWith('re:') && !match.includes('*');
      if (plain && merge === undefined) {
        if (!this.exact.has(match)) this.exact.set(match, q);
        continue;
      }
      // An entry matching one key exactly is a pattern too: its key must merge like any other.
      const pattern = plain
        ? { prefixLength: match.length, test: (key: string) => key === match }
        : (this.compiled.get(match) ?? previous?.compiled.get(match) ?? compile(q));
      if (!plain) this.compiled.set(match, pattern);
      this.patterns.push({ quota: q, pattern });
      if (merge !== undefined) this.entries.push({ quota: q, pattern });
    }
    // Stable sort keeps definition order among equal prefixes.
    this.patterns.sort((a, b) => b.pattern.prefixLength - a.pattern.prefixLength);
  }

  byNameOrUndefined(name: string): CompiledQuota | undefined {
    return this.byName.get(name);
  }

  all(): IterableIterator<CompiledQuota> {
    return this.byName.values();
  }

  /** The quota for a request: undefined when a named quota does not exist, or nothing matches. */
  resolve(name: string | undefined, key: string): CompiledQuota | undefined {
    if (name !== undefined) return this.byName.get(name);
    const exact = this.exact.get(key);
    if (exact) return exact;
    if (this.patterns.length === 0) return this.byName.get('default');
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    let found: CompiledQuota | undefined;
    for (const m of this.patterns) {
      if (m.pattern.test(key)) {
        found = m.quota;
        break;
      }
    }
    if (found?.spec.merge !== undefined) found = this.merged(key);
    found ??= this.byName.get('default');
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(key, found);
    return found;
  }

  /**
   * GoCC's merge: every entry the key fits, in definition order, each field taken from the last
   * entry that sets it; the quota with that record. Entries that set nothing leave the last one.
   */
  private merged(key: string): CompiledQuota | undefined {
    let last: CompiledQuota | undefined;
    let fields: Record<string, string> | undefined;
    for (const { quota, pattern } of this.entries) {
      if (!pattern.test(key)) continue;
      last = quota;
      for (const [field, entry] of Object.entries(quota.spec.merge!))
        (fields ??= {})[field] = entry;
    }
    return (fields === undefined ? undefined : this.merges.get(mergeId(fields))) ?? last;
  }
}

function compile(q: CompiledQuota): KeyPattern {
  try {
    return compileKeyPattern(q.spec.match!);
  } catch (e) {
    throw new InvalidQuotaError(q.name, 'match', `invalid regex: ${(e as Error).message}`);
  }
}
