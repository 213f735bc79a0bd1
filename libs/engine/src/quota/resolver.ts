import { InvalidQuotaError } from '../errors';
import type { CompiledQuota } from './compile';
import { compileKeyPattern, type KeyPattern } from './key-pattern';

interface Matcher {
  readonly quota: CompiledQuota;
  readonly pattern: KeyPattern;
}

const CACHE_LIMIT = 10_000;

/**
 * Quota resolution (docs/contract.md, Concepts): the named quota; else the quota whose `match` fits
 * the key, the longest literal prefix winning (ties: first defined); else `default`.
 */
export class QuotaResolver {
  private readonly byName = new Map<string, CompiledQuota>();
  private readonly exact = new Map<string, CompiledQuota>();
  private readonly patterns: Matcher[] = [];
  /** Compiled patterns by `match`, handed to the next resolver so a change compiles only what changed. */
  private readonly compiled = new Map<string, KeyPattern>();
  private readonly cache = new Map<string, CompiledQuota | undefined>();

  /** `previous`: the resolver this one replaces; its compiled patterns are reused. */
  constructor(quotas: readonly CompiledQuota[], previous?: QuotaResolver) {
    for (const q of quotas) {
      this.byName.set(q.name, q);
      const match = q.spec.match;
      if (match === undefined || match === '') continue;
      if (!match.startsWith('re:') && !match.includes('*')) {
        if (!this.exact.has(match)) this.exact.set(match, q);
        continue;
      }
      const pattern = this.compiled.get(match) ?? previous?.compiled.get(match) ?? compile(q);
      this.compiled.set(match, pattern);
      this.patterns.push({ quota: q, pattern });
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
    found ??= this.byName.get('default');
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(key, found);
    return found;
  }
}

function compile(q: CompiledQuota): KeyPattern {
  try {
    return compileKeyPattern(q.spec.match!);
  } catch (e) {
    throw new InvalidQuotaError(q.name, 'match', `invalid regex: ${(e as Error).message}`);
  }
}
