import {
  CHANGE_COMMIT_KEY,
  changePartIndex,
  readChangeCommit,
  readChangePart,
  type ChangeReading,
} from './control-change';

/** Turns a KV value into what the reader serves, or says why it cannot be served. */
export type EntryReader<V> = (key: string, raw: string) => ChangeReading<V>;

/** An entry in force: its value as the bucket holds it, and as read. */
export interface HeldEntry<V> {
  readonly raw: string;
  readonly value: V;
}

/** A write of a part, read when the part arrived: refused ones are skipped at the commit. */
type HeldOp<V> =
  | { readonly key: string; readonly put: HeldEntry<V> }
  | { readonly key: string; readonly put: null }
  | { readonly key: string; readonly refused: true };

interface HeldPart<V> {
  readonly id: string;
  readonly ops: readonly HeldOp<V>[];
}

/** At most this many problems of one part are reported; the rest are counted. */
const PROBLEMS_SHOWN = 3;

/**
 * The control bucket as a reader serves it, fed the bucket's entries in stream order (a watch:
 * its replay, then live changes). Used by the limiters (what they put in force) and by the admin
 * (what the limiters serve, to reconcile with the store), so both agree on it.
 *
 * - A quota or provider entry is in force as it arrives (single mutations: one entry, one step).
 * - Change parts are held aside; the commit applies all of its parts' writes at once, at the
 *   commit's place in the stream, so a later single write of the same key wins over it. A commit
 *   whose parts are not all there (or not all of its id) applies nothing.
 * - A value the reader refuses leaves that key's last good value in force.
 */
export class BucketView<V> {
  private readonly live = new Map<string, HeldEntry<V>>();
  private readonly parts = new Map<number, HeldPart<V>>();
  /** Part slots present in the bucket (read or not): the admin deletes them once done. */
  private readonly slots = new Set<number>();
  private commitPresent = false;
  private committed: { readonly id: string; readonly keys: readonly string[] } | undefined;
  /** Keys delivered since beginReplay(), while a watch replays the bucket. */
  private seen: Set<string> | undefined;
  private changed = false;

  constructor(private readonly read: EntryReader<V>) {}

  /** An entry known before the bucket is read (a stored copy): the last good value of its key. */
  seed(key: string, raw: string, value: V): void {
    this.live.set(key, { raw, value });
  }

  /** A new watch replays every live key; the change traces it holds are delivered again. */
  beginReplay(): void {
    this.seen = new Set();
    this.parts.clear();
    this.slots.clear();
    this.commitPresent = false;
    this.committed = undefined;
  }

  /** Ends the replay: drops the entries it did not deliver (deleted meanwhile) and names them. */
  endReplay(): string[] {
    const seen = this.seen;
    this.seen = undefined;
    if (seen === undefined) return [];
    const dropped = [...this.live.keys()].filter((key) => !seen.has(key));
    for (const key of dropped) this.live.delete(key);
    if (dropped.length > 0) this.changed = true;
    return dropped;
  }

  /** A PUT; answers the problems found (for the log), none when it was taken. */
  put(key: string, raw: string): string[] {
    if (key === CHANGE_COMMIT_KEY) return this.commit(raw);
    const index = changePartIndex(key);
    if (index !== undefined) return this.hold(key, index, raw);
    this.seen?.add(key);
    if (this.live.get(key)?.raw === raw) return [];
    const reading = this.read(key, raw);
    if (!reading.ok) return [reading.reason];
    this.live.set(key, { raw, value: reading.value });
    this.changed = true;
    return [];
  }

  /** A DEL or PURGE. */
  remove(key: string): void {
    if (key === CHANGE_COMMIT_KEY) {
      this.commitPresent = false;
      this.committed = undefined;
      return;
    }
    const index = changePartIndex(key);
    if (index !== undefined) {
      this.parts.delete(index);
      this.slots.delete(index);
      return;
    }
    this.seen?.add(key);
    if (this.live.delete(key)) this.changed = true;
  }

  /** True when the entries in force changed since the last call. */
  takeChanged(): boolean {
    const changed = this.changed;
    this.changed = false;
    return changed;
  }

  /** The entries in force, by key. */
  get entries(): ReadonlyMap<string, HeldEntry<V>> {
    return this.live;
  }

  /** The keys of the change whose commit is still in the bucket (applied), if any. */
  get committedKeys(): readonly string[] | undefined {
    return this.committed?.keys;
  }

  /** Whether the bucket holds traces of a change: a commit or parts. */
  get changeTraces(): { readonly commit: boolean; readonly parts: readonly number[] } {
    return { commit: this.commitPresent, parts: [...this.slots] };
  }

  private hold(key: string, index: number, raw: string): string[] {
    this.slots.add(index);
    this.parts.delete(index);
    const reading = readChangePart(key, raw);
    if (!reading.ok) return [reading.reason];
    const problems: string[] = [];
    const ops = reading.value.ops.map(([opKey, value]): HeldOp<V> => {
      if (value === null) return { key: opKey, put: null };
      const entry = isChangeProtocolKey(opKey)
        ? { ok: false as const, reason: `${opKey}: a change cannot write its own protocol's keys` }
        : this.read(opKey, value);
      if (entry.ok) return { key: opKey, put: { raw: value, value: entry.value } };
      problems.push(entry.reason);
      return { key: opKey, refused: true };
    });
    this.parts.set(index, { id: reading.value.id, ops });
    return summarise(key, problems);
  }

  private commit(raw: string): string[] {
    this.commitPresent = true;
    this.committed = undefined;
    const reading = readChangeCommit(raw);
    if (!reading.ok) return [reading.reason];
    const { id, parts, ops } = reading.value;
    const held: HeldPart<V>[] = [];
    for (let index = 0; index < parts; index++) {
      const part = this.parts.get(index);
      if (part?.id !== id) {
        return [`change ${id}: part ${index} of ${parts} is missing: the change is not applied`];
      }
      held.push(part);
    }
    const count = held.reduce((sum, part) => sum + part.ops.length, 0);
    if (count !== ops) {
      return [`change ${id}: ${count} writes in its parts, ${ops} committed: not applied`];
    }
    const keys: string[] = [];
    for (const part of held) {
      for (const op of part.ops) {
        keys.push(op.key);
        this.seen?.add(op.key);
        if ('refused' in op) continue;
        if (op.put === null) {
          if (this.live.delete(op.key)) this.changed = true;
        } else if (this.live.get(op.key)?.raw !== op.put.raw) {
          this.live.set(op.key, op.put);
          this.changed = true;
        }
      }
    }
    this.committed = { id, keys };
    return [];
  }
}

function isChangeProtocolKey(key: string): boolean {
  return key === CHANGE_COMMIT_KEY || changePartIndex(key) !== undefined;
}

function summarise(key: string, problems: string[]): string[] {
  if (problems.length <= PROBLEMS_SHOWN) return problems;
  return [
    ...problems.slice(0, PROBLEMS_SHOWN),
    `${key}: and ${problems.length - PROBLEMS_SHOWN} more refused entries`,
  ];
}
