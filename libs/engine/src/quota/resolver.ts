import { InvalidQuotaError } from '../errors';
import type { CompiledQuota } from './compile';
import { compileKeyPattern, exactPattern, type KeyPattern } from './key-pattern';
import { PatternIndex, PatternIndexBuilder } from './pattern-index';

/** A quota's `merge` as one string: equal records, equal strings. */
function mergeId(merge: Readonly<Record<string, string>>): string {
  return Object.keys(merge)
    .sort()
    .map((field) => `${field}\u0000${merge[field]}`)
    .join('\u0001');
}

const CACHE_LIMIT = 10_000;

const isEntry = (q: CompiledQuota): boolean => q.spec.merge !== undefined;

/** What a resolver holds, gathered by QuotaResolverBuilder. */
interface ResolverParts {
  readonly byName: ReadonlyMap<string, CompiledQuota>;
  readonly exact: ReadonlyMap<string, CompiledQuota>;
  readonly patterns: PatternIndex<CompiledQuota>;
  readonly patternCount: number;
  /** Compiled patterns by `match`, handed to the next resolver so a change compiles only what changed. */
  readonly compiled: ReadonlyMap<string, KeyPattern>;
  /** Every quota with a non-empty `merge`, by mergeId. */
  readonly merges: ReadonlyMap<string, CompiledQuota>;
}

/**
 * Quota resolution (docs/contract.md, Concepts): the named quota; else the quota whose `match` fits
 * the key, the longest literal prefix winning (ties: first defined); else `default`. Entries of a
 * GoCC file (quotas with `match` and `merge`) merge instead: when one wins, every entry that fits
 * the key is laid over the others in definition order, and the quota with that `merge` decides.
 * Patterns are looked up in a PatternIndex, so a key's cost does not grow with their number.
 */
export class QuotaResolver {
  private readonly cache = new Map<string, CompiledQuota | undefined>();

  constructor(private readonly parts: ResolverParts) {}

  /** The resolver of `quotas` at once; `previous`: the one it replaces (its patterns are reused). */
  static of(quotas: readonly CompiledQuota[], previous?: QuotaResolver): QuotaResolver {
    const builder = new QuotaResolverBuilder(previous);
    for (const q of quotas) builder.add(q);
    return builder.build(Infinity)!;
  }

  /** The compiled pattern of `match` in this resolver, if it has one. */
  compiledPattern(match: string): KeyPattern | undefined {
    return this.parts.compiled.get(match);
  }

  byNameOrUndefined(name: string): CompiledQuota | undefined {
    return this.parts.byName.get(name);
  }

  all(): IterableIterator<CompiledQuota> {
    return this.parts.byName.values();
  }

  /** The quota for a request: undefined when a named quota does not exist, or nothing matches. */
  resolve(name: string | undefined, key: string): CompiledQuota | undefined {
    const { byName, exact, patterns, patternCount } = this.parts;
    if (name !== undefined) return byName.get(name);
    const exactly = exact.get(key);
    if (exactly) return exactly;
    if (patternCount === 0) return byName.get('default');
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    let found = patterns.first(key);
    if (found !== undefined && isEntry(found)) found = this.merged(key);
    found ??= byName.get('default');
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
    for (const quota of this.parts.patterns.all(key, isEntry)) {
      last = quota;
      for (const [field, entry] of Object.entries(quota.spec.merge!))
        (fields ??= {})[field] = entry;
    }
    return (fields === undefined ? undefined : this.parts.merges.get(mergeId(fields))) ?? last;
  }
}

/**
 * Gathers a resolver quota by quota (`add`, in definition order: compiles its pattern), then
 * indexes the patterns in steps (`build`), so that many quotas are resolved into force between
 * requests rather than in one long turn of the event loop.
 */
export class QuotaResolverBuilder {
  private readonly byName = new Map<string, CompiledQuota>();
  private readonly exact = new Map<string, CompiledQuota>();
  private readonly patterns = new PatternIndexBuilder<CompiledQuota>();
  private patternCount = 0;
  private readonly compiled = new Map<string, KeyPattern>();
  private readonly merges = new Map<string, CompiledQuota>();

  constructor(private readonly previous?: QuotaResolver) {}

  /** Adds the next quota; throws InvalidQuotaError for a regex RE2 refuses. */
  add(q: CompiledQuota): void {
    this.byName.set(q.name, q);
    const merge = q.spec.merge;
    if (merge !== undefined && Object.keys(merge).length > 0) {
      const id = mergeId(merge);
      if (!this.merges.has(id)) this.merges.set(id, q);
    }
    const match = q.spec.match;
    if (match === undefined || match === '') return;
    const plain = !match.startsWith('re:') && !match.includes('*');
    if (plain && merge === undefined) {
      if (!this.exact.has(match)) this.exact.set(match, q);
      return;
    }
    // An entry matching one key exactly is a pattern too: its key must merge like any other.
    let pattern: KeyPattern;
    if (plain) {
      pattern = exactPattern(match);
    } else {
      pattern =
        this.compiled.get(match) ?? this.previous?.compiledPattern(match) ?? compile(q, match);
      this.compiled.set(match, pattern);
    }
    this.patterns.add(pattern, q);
    this.patternCount++;
  }

  /** Indexes up to `budget` patterns; the resolver once all are, else undefined. */
  build(budget: number): QuotaResolver | undefined {
    const patterns = this.patterns.build(budget);
    if (patterns === undefined) return undefined;
    const { byName, exact, patternCount, compiled, merges } = this;
    return new QuotaResolver({ byName, exact, patterns, patternCount, compiled, merges });
  }
}

function compile(q: CompiledQuota, match: string): KeyPattern {
  try {
    return compileKeyPattern(match);
  } catch (e) {
    throw new InvalidQuotaError(q.name, 'match', `invalid regex: ${(e as Error).message}`);
  }
}
