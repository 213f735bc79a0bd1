import { InvalidQuotaError } from '../errors';
import type { CompiledQuota } from './compile';

interface Matcher {
  readonly quota: CompiledQuota;
  readonly prefixLength: number;
  readonly test: (key: string) => boolean;
}

const REGEX_META = /[\\^$.*+?()[\]{}|]/;

function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
}

/** Literal characters a regex requires at the start of the key, for "longest prefix wins". */
function regexLiteralPrefix(source: string): number {
  if (!source.startsWith('^')) return 0;
  let n = 0;
  for (let i = 1; i < source.length && !REGEX_META.test(source[i]!); i++) n++;
  return n;
}

const CACHE_LIMIT = 10_000;

/**
 * Quota resolution (CONTRACT section 1): the named quota; else the quota whose `match` fits the
 * key, the longest literal prefix winning (ties: first defined); else `default`.
 */
export class QuotaResolver {
  private readonly byName = new Map<string, CompiledQuota>();
  private readonly exact = new Map<string, CompiledQuota>();
  private readonly patterns: Matcher[] = [];
  private readonly cache = new Map<string, CompiledQuota | undefined>();

  constructor(quotas: readonly CompiledQuota[]) {
    for (const q of quotas) {
      this.byName.set(q.name, q);
      const match = q.spec.match;
      if (match === undefined || match === '') continue;
      if (match.startsWith('re:')) {
        let re: RegExp;
        try {
          re = new RegExp(match.slice(3), 'u');
        } catch (e) {
          throw new InvalidQuotaError(q.name, 'match', `invalid regex: ${(e as Error).message}`);
        }
        this.patterns.push({
          quota: q,
          prefixLength: regexLiteralPrefix(re.source),
          test: (k) => re.test(k),
        });
      } else if (!match.includes('*')) {
        if (!this.exact.has(match)) this.exact.set(match, q);
      } else {
        const re = globToRegExp(match);
        this.patterns.push({ quota: q, prefixLength: match.indexOf('*'), test: (k) => re.test(k) });
      }
    }
    // Stable sort keeps definition order among equal prefixes.
    this.patterns.sort((a, b) => b.prefixLength - a.prefixLength);
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
      if (m.test(key)) {
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
