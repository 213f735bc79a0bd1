import type { KeyPattern } from './key-pattern';

/** A pattern with what it stands for; `order` is its place among the patterns as defined. */
interface Entry<T> {
  readonly pattern: KeyPattern;
  readonly value: T;
  readonly order: number;
}

/**
 * Patterns a key is tried against one after the other, in rank order, while there are no more:
 * a scan of a few costs less than looking up a key's ends (0.3 against 0.7 µs for one glob).
 */
const SCAN_LIMIT = 8;

/** Whether `a` wins over `b`: the longer literal prefix, then the one defined first. */
function ahead<T>(a: Entry<T>, b: Entry<T>): boolean {
  const longer = a.pattern.prefixLength - b.pattern.prefixLength;
  return longer > 0 || (longer === 0 && a.order < b.order);
}

/**
 * Patterns found by their literal ends (docs/architecture.md, "resolve the quota"). Each pattern
 * is filed under its head (the text its keys start with) or, when that is shorter, its tail, in a
 * bucket ordered as resolution ranks (longest literal prefix, then definition order). A key looks
 * up only the buckets of its own prefixes and suffixes, one per length in use: the patterns tried
 * are those that share a head or a tail with the key, not all of them. Patterns with neither (an
 * `re:` not anchored by `^literal`, a glob such as `*x*`) are tried one after the other.
 */
export class PatternIndex<T> {
  /** Every entry in rank order while there are at most SCAN_LIMIT: so few are scanned instead. */
  private ranked: Entry<T>[] | undefined = [];
  private readonly byHead = new Map<string, Entry<T>[]>();
  private readonly byTail = new Map<string, Entry<T>[]>();
  private readonly loose: Entry<T>[] = [];
  /** Lengths of the heads and tails filed, longest first. */
  private headLengths: number[] = [];
  private tailLengths: number[] = [];

  /** The winning pattern's value among those that match `key`. */
  first(key: string): T | undefined {
    if (this.ranked !== undefined) {
      for (const entry of this.ranked) if (entry.pattern.test(key)) return entry.value;
      return undefined;
    }
    let best: Entry<T> | undefined;
    for (const length of this.headLengths) {
      if (length > key.length) continue;
      best = firstIn(this.byHead.get(key.slice(0, length)), key, best);
    }
    for (const length of this.tailLengths) {
      if (length > key.length) continue;
      best = firstIn(this.byTail.get(key.slice(key.length - length)), key, best);
    }
    return firstIn(this.loose, key, best)?.value;
  }

  /** The values of every pattern `wanted` accepts that matches `key`, in definition order. */
  all(key: string, wanted: (value: T) => boolean): T[] {
    const found: Entry<T>[] = [];
    const collect = (bucket: readonly Entry<T>[] | undefined): void => {
      for (const entry of bucket ?? []) {
        if (wanted(entry.value) && entry.pattern.test(key)) found.push(entry);
      }
    };
    if (this.ranked !== undefined) collect(this.ranked);
    else this.buckets(key, collect);
    return found.sort((a, b) => a.order - b.order).map((entry) => entry.value);
  }

  /** Calls `visit` with every bucket a key with `key`'s ends may find a match in. */
  private buckets(key: string, visit: (bucket: readonly Entry<T>[] | undefined) => void): void {
    for (const length of this.headLengths) {
      if (length <= key.length) visit(this.byHead.get(key.slice(0, length)));
    }
    for (const length of this.tailLengths) {
      if (length <= key.length) visit(this.byTail.get(key.slice(key.length - length)));
    }
    visit(this.loose);
  }

  /** Files `entry` after every entry filed before it: the builder files them in rank order. */
  file(entry: Entry<T>): void {
    this.ranked?.push(entry);
    if (this.ranked !== undefined && this.ranked.length > SCAN_LIMIT) this.ranked = undefined;
    const { head, tail } = entry.pattern;
    if (head.length === 0 && tail.length === 0) {
      this.loose.push(entry);
      return;
    }
    const byHead = head.length >= tail.length;
    const [buckets, text] = byHead ? [this.byHead, head] : [this.byTail, tail];
    const bucket = buckets.get(text);
    if (bucket !== undefined) {
      bucket.push(entry);
      return;
    }
    buckets.set(text, [entry]);
    if (byHead) this.headLengths = withLength(this.headLengths, head.length);
    else this.tailLengths = withLength(this.tailLengths, tail.length);
  }
}

/** The first entry of `bucket` (in rank order) that matches `key` and beats `best`, else `best`. */
function firstIn<T>(
  bucket: readonly Entry<T>[] | undefined,
  key: string,
  best: Entry<T> | undefined,
): Entry<T> | undefined {
  if (bucket === undefined) return best;
  for (const entry of bucket) {
    if (best !== undefined && !ahead(entry, best)) return best;
    if (entry.pattern.test(key)) return entry;
  }
  return best;
}

/** `lengths` (longest first) with `length` in it. */
function withLength(lengths: number[], length: number): number[] {
  if (lengths.includes(length)) return lengths;
  return [...lengths, length].sort((a, b) => b - a);
}

/**
 * Builds a PatternIndex in steps of bounded work, so a host can build one of many patterns
 * between requests. `add` takes the patterns in definition order; `build` then files them by
 * rank, `budget` at a time, and answers the index once all are filed.
 */
export class PatternIndexBuilder<T> {
  /** Entries by prefixLength: filing them longest first keeps every bucket in rank order. */
  private readonly byPrefixLength = new Map<number, Entry<T>[]>();
  private added = 0;
  /** Where filing is: the prefix lengths, longest first, and the place in the current one. */
  private lengths: number[] | undefined;
  private lengthAt = 0;
  private within = 0;
  private readonly index = new PatternIndex<T>();

  add(pattern: KeyPattern, value: T): void {
    const entry = { pattern, value, order: this.added++ };
    const same = this.byPrefixLength.get(pattern.prefixLength);
    if (same === undefined) this.byPrefixLength.set(pattern.prefixLength, [entry]);
    else same.push(entry);
  }

  /** Files up to `budget` patterns; the index once every pattern is filed, else undefined. */
  build(budget: number): PatternIndex<T> | undefined {
    const lengths = (this.lengths ??= [...this.byPrefixLength.keys()].sort((a, b) => b - a));
    for (let left = budget; left > 0 && this.lengthAt < lengths.length;) {
      const entries = this.byPrefixLength.get(lengths[this.lengthAt]!)!;
      const end = Math.min(entries.length, this.within + left);
      for (let at = this.within; at < end; at++) this.index.file(entries[at]!);
      left -= end - this.within;
      this.within = end;
      if (end === entries.length) {
        this.lengthAt++;
        this.within = 0;
      }
    }
    return this.lengthAt === lengths.length ? this.index : undefined;
  }
}
