import {
  encodeEntry,
  type ControlEntry,
  type ControlProvider,
  type ControlQuota,
  type ControlSet,
} from '@app/contracts';
import { parseControlEntry } from './parse-control-entry';

/** Code-unit order: the same on every replica, whatever its locale. */
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The control bucket as this process knows it, one entry per KV key. A value that cannot be read
 * leaves the key's last good value in force (as a refused config file does), so a bad write never
 * silently removes a quota; the problem is reported to the caller for the log.
 */
export class ControlEntries {
  private readonly entries = new Map<string, ControlEntry>();
  /** Keys delivered since beginSnapshot(), while a watch replays the bucket. */
  private seen: Set<string> | undefined;

  /** Starts from a set known earlier (the SQLite copy): its entries count as the last good ones. */
  static from(set: ControlSet | undefined): ControlEntries {
    const entries = new ControlEntries();
    for (const quota of set?.quotas ?? []) entries.store({ kind: 'quota', quota });
    for (const provider of set?.providers ?? []) entries.store({ kind: 'provider', provider });
    return entries;
  }

  /** A new watch replays every live key; keys it does not replay were deleted meanwhile. */
  beginSnapshot(): void {
    this.seen = new Set();
  }

  /** Ends the replay: drops the keys it did not deliver and answers them. */
  endSnapshot(): string[] {
    const seen = this.seen;
    this.seen = undefined;
    if (seen === undefined) return [];
    const dropped = [...this.entries.keys()].filter((key) => !seen.has(key));
    for (const key of dropped) this.entries.delete(key);
    return dropped;
  }

  /** A PUT of `value` under `key`; answers why it was refused, or undefined when it was taken. */
  put(key: string, value: string): string | undefined {
    this.seen?.add(key);
    const parsed = parseControlEntry(key, value);
    if (!parsed.ok) return parsed.reason;
    this.entries.set(key, parsed.entry);
    return undefined;
  }

  /** A DEL or PURGE. */
  remove(key: string): void {
    this.seen?.add(key);
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The overlay for composeQuotas, sorted by name so every replica composes the same list. */
  toSet(): ControlSet {
    const quotas: ControlQuota[] = [];
    const providers: ControlProvider[] = [];
    for (const entry of this.entries.values()) {
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

  private store(entry: ControlEntry): void {
    this.entries.set(encodeEntry(entry).key, entry);
  }
}
