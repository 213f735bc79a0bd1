import {
  BucketView,
  encodeEntry,
  type BucketViewOptions,
  type ControlEntry,
  type ControlProvider,
  type ControlQuota,
  type ControlSet,
} from '@app/contracts';
import { parseControlEntry } from './parse-control-entry';

/** Code-unit order: the same on every replica, whatever its locale. */
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function readEntry(key: string, raw: string) {
  const parsed = parseControlEntry(key, raw);
  return parsed.ok
    ? { ok: true as const, value: parsed.entry }
    : { ok: false as const, reason: parsed.reason };
}

/**
 * The control bucket as this process serves it (BucketView): one entry per quota or provider
 * key, and a change of many entries (its parts and commit) applied all at once. A value that
 * cannot be read leaves the key's last good value in force (as a refused config file does), so a
 * bad write never silently removes a quota; the problem is reported to the caller for the log.
 */
export class ControlEntries {
  private readonly view: BucketView<ControlEntry>;

  /** `options`: how writes are verified (a limiter with CONTROL_PUBLIC_KEY) and refusals told. */
  constructor(options: BucketViewOptions = {}) {
    this.view = new BucketView<ControlEntry>(readEntry, options);
  }

  /** Starts from a set known earlier (the SQLite copy): its entries count as the last good ones. */
  static from(set: ControlSet | undefined, options: BucketViewOptions = {}): ControlEntries {
    const entries = new ControlEntries(options);
    for (const quota of set?.quotas ?? []) entries.seed({ kind: 'quota', quota });
    for (const provider of set?.providers ?? []) entries.seed({ kind: 'provider', provider });
    return entries;
  }

  /** A new watch replays every live key; keys it does not replay were deleted meanwhile. */
  beginSnapshot(): void {
    this.view.beginReplay();
  }

  /** Ends the replay: drops the keys it did not deliver and answers them. */
  endSnapshot(): string[] {
    return this.view.endReplay();
  }

  /**
   * A PUT of `value` under `key`; answers why it (or entries of a change part) was refused,
   * undefined when it was taken.
   */
  put(key: string, value: string): string | undefined {
    const problems = this.view.put(key, value);
    return problems.length > 0 ? problems.join('; ') : undefined;
  }

  /** A DEL or PURGE, with its body (a delete's signature). */
  remove(key: string, raw = ''): void {
    this.view.remove(key, raw);
  }

  /** True when the entries in force changed since the last call (a set to put in force). */
  takeChanged(): boolean {
    return this.view.takeChanged();
  }

  get size(): number {
    return this.view.entries.size;
  }

  /** The overlay for composeQuotas, sorted by name so every replica composes the same list. */
  toSet(): ControlSet {
    const quotas: ControlQuota[] = [];
    const providers: ControlProvider[] = [];
    for (const { value: entry } of this.view.entries.values()) {
      switch (entry.kind) {
        case 'quota':
          quotas.push(entry.quota);
          break;
        case 'provider':
          providers.push(entry.provider);
          break;
      }
    }
    quotas.sort((a, b) => byName(a.spec.name, b.spec.name));
    providers.sort((a, b) => byName(a.name, b.name));
    return { quotas, providers };
  }

  private seed(entry: ControlEntry): void {
    const { key, value } = encodeEntry(entry);
    this.view.seed(key, value, entry);
  }
}
