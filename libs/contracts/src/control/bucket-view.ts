import {
  CHANGE_COMMIT_KEY,
  changePartIndex,
  readChangeCommit,
  readChangePart,
  type ChangeReading,
} from './control-change';
import { splitValue, type Refusal } from './signing/control-signature';
import { UNVERIFIED_OPENER, type EntryOpener } from './signing/entry-opener';

/** Turns a KV value into what the reader serves, or says why it cannot be served. */
export type EntryReader<V> = (key: string, raw: string) => ChangeReading<V>;

/** An entry in force: its payload (the value without its signature line), and as read. */
export interface HeldEntry<V> {
  readonly raw: string;
  readonly value: V;
}

/**
 * How much of not-yet-committed changes a reader holds aside: a change larger than this is
 * dropped (logged) and not applied, so hostile parts cannot grow a reader's memory.
 */
export interface PartLimits {
  readonly parts: number;
  /** Characters of the parts' payloads (UTF-16 units: bytes for the ASCII the admin writes). */
  readonly chars: number;
}

/** A 4 MiB import is about 100 parts of 64 KiB; four times that fits. */
export const DEFAULT_PART_LIMITS: PartLimits = { parts: 1024, chars: 64 * 1024 * 1024 };

export interface BucketViewOptions {
  /** Verifies signatures (UNVERIFIED_OPENER: takes everything, in stream order). */
  readonly opener?: EntryOpener;
  /** A write refused for its signature or its age: it changes nothing. */
  readonly onRefused?: (refusal: Refusal, reason: string, key: string) => void;
  readonly partLimits?: PartLimits;
  /**
   * A put whose payload is the entry in force changes nothing, whoever signed it: taken without
   * checking its signature (a limiter: an admin's settle rewrites thousands of them). Readers
   * that must see every foreign write (the admin) leave it off.
   */
  readonly skipUnchanged?: boolean;
}

/** The sequence and signature line of the last write taken for a key (verified readers only). */
interface Known {
  readonly seq: number;
  readonly line: string;
}

/** A write of a part, read when the part arrived: refused ones are skipped at the commit. */
type HeldOp<V> =
  | { readonly key: string; readonly put: HeldEntry<V> }
  | { readonly key: string; readonly put: null }
  | { readonly key: string; readonly refused: true };

interface HeldPart<V> {
  readonly id: string;
  readonly ops: readonly HeldOp<V>[];
  readonly chars: number;
}

/** A write's payload once its signature (if the reader verifies) and its order were checked. */
interface Taken {
  readonly payload: string;
  /** The signed sequence; undefined for readers that do not verify. */
  readonly seq: number | undefined;
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
 * - With a verifying opener (docs/architecture.md, "Signed control"), a write counts only when
 *   the admin's key signed it for that key, deletes included, and only when its sequence is not
 *   older than the last one taken for the key: a replayed old entry changes nothing. The writes
 *   of a commit carry the commit's sequence.
 */
export class BucketView<V> {
  private readonly live = new Map<string, HeldEntry<V>>();
  private readonly parts = new Map<number, HeldPart<V>>();
  private partChars = 0;
  private readonly known = new Map<string, Known>();
  private highest = 0;
  private readonly opener: EntryOpener;
  private readonly partLimits: PartLimits;
  /** Part slots present in the bucket (read or not): the admin deletes them once done. */
  private readonly slots = new Set<number>();
  private commitPresent = false;
  private committed: { readonly id: string; readonly keys: readonly string[] } | undefined;
  /** Keys delivered since beginReplay(), while a watch replays the bucket. */
  private seen: Set<string> | undefined;
  private changed = false;

  constructor(
    private readonly read: EntryReader<V>,
    private readonly options: BucketViewOptions = {},
  ) {
    this.opener = options.opener ?? UNVERIFIED_OPENER;
    this.partLimits = options.partLimits ?? DEFAULT_PART_LIMITS;
  }

  /** An entry known before the bucket is read (a stored copy): the last good value of its key. */
  seed(key: string, raw: string, value: V): void {
    this.live.set(key, { raw, value });
  }

  /** A new watch replays every live key; the change traces it holds are delivered again. */
  beginReplay(): void {
    this.seen = new Set();
    this.parts.clear();
    this.partChars = 0;
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
    // Sequences are remembered for the keys the bucket still holds (deletes included).
    for (const key of this.known.keys()) if (!seen.has(key)) this.known.delete(key);
    if (dropped.length > 0) this.changed = true;
    return dropped;
  }

  /**
   * A PUT; answers the problems of its payload found (for the log), none when it was taken.
   * Refused signatures and replays go to `onRefused` instead.
   */
  put(key: string, raw: string): string[] {
    this.seen?.add(key);
    // A refused write changes nothing, but its key is in the bucket: the admin clears it.
    if (key === CHANGE_COMMIT_KEY) {
      this.commitPresent = true;
      const taken = this.take('put', key, raw);
      if (taken === undefined) return [];
      this.committed = undefined;
      return this.commit(taken);
    }
    const index = changePartIndex(key);
    if (index !== undefined) {
      this.slots.add(index);
      const taken = this.take('put', key, raw);
      if (taken === undefined) return [];
      this.dropPart(index);
      return this.hold(key, index, taken.payload);
    }
    if (this.isHeldAgain(key, raw)) return [];
    if (this.options.skipUnchanged === true) {
      const held = this.live.get(key);
      if (held !== undefined && splitValue(raw).payload === held.raw) return [];
    }
    const taken = this.take('put', key, raw);
    if (taken === undefined || this.live.get(key)?.raw === taken.payload) return [];
    const reading = this.read(key, taken.payload);
    if (!reading.ok) return [reading.reason];
    this.live.set(key, { raw: taken.payload, value: reading.value });
    this.changed = true;
    return [];
  }

  /** A DEL or PURGE; `raw` is its body (a verifying reader takes only a signed delete). */
  remove(key: string, raw = ''): void {
    this.seen?.add(key);
    if (key === CHANGE_COMMIT_KEY) {
      if (this.take('del', key, raw) === undefined) return;
      this.commitPresent = false;
      this.committed = undefined;
      return;
    }
    const index = changePartIndex(key);
    if (index !== undefined) {
      if (this.take('del', key, raw) === undefined) return;
      this.dropPart(index);
      this.slots.delete(index);
      return;
    }
    if (this.take('del', key, raw) === undefined) return;
    if (this.live.delete(key)) this.changed = true;
  }

  /** The highest sequence taken (0 without a verifying opener). */
  get highestSeq(): number {
    return this.highest;
  }

  /** Opens a write and checks its order; undefined (reported to onRefused) when refused. */
  private take(op: 'put' | 'del', key: string, raw: string): Taken | undefined {
    const opened = this.opener.open(op, key, raw);
    if (!opened.ok) {
      this.options.onRefused?.(opened.refusal, opened.reason, key);
      return undefined;
    }
    const line = opened.line;
    if (!this.opener.verifies || line === undefined)
      return { payload: opened.payload, seq: undefined };
    const known = this.known.get(key);
    if (known !== undefined && line.seq < known.seq) {
      this.options.onRefused?.(
        'replayed',
        `${key}: sequence ${line.seq} is older than ${known.seq}, the last taken`,
        key,
      );
      return undefined;
    }
    this.known.set(key, { seq: line.seq, line: raw.slice(0, raw.indexOf('\n')) });
    if (line.seq > this.highest) this.highest = line.seq;
    return { payload: opened.payload, seq: line.seq };
  }

  /** The very value taken last for `key` again (a watch replaying): nothing to verify or read. */
  private isHeldAgain(key: string, raw: string): boolean {
    const line = this.known.get(key)?.line;
    const payload = this.live.get(key)?.raw;
    if (line === undefined || line === '' || payload === undefined) return false;
    return (
      raw.length === line.length + 1 + payload.length &&
      raw.charCodeAt(line.length) === 10 &&
      raw.startsWith(line) &&
      raw.endsWith(payload)
    );
  }

  private dropPart(index: number): void {
    const held = this.parts.get(index);
    if (held === undefined) return;
    this.partChars -= held.chars;
    this.parts.delete(index);
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
    const limits = this.partLimits;
    if (this.parts.size + 1 > limits.parts || this.partChars + raw.length > limits.chars) {
      const held = this.parts.size;
      const chars = this.partChars;
      this.parts.clear();
      this.partChars = 0;
      return [
        `${key}: ${held} change parts (${chars} characters) held already, at most ` +
          `${limits.parts} parts and ${limits.chars} characters: all dropped, the change they ` +
          'belong to is not applied',
      ];
    }
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
    this.parts.set(index, { id: reading.value.id, ops, chars: raw.length });
    this.partChars += raw.length;
    return summarise(key, problems);
  }

  private commit({ payload: raw, seq }: Taken): string[] {
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
        if (seq !== undefined) {
          // A single write signed after the commit wins over it, as in stream order.
          const known = this.known.get(op.key);
          if (known !== undefined && known.seq > seq) continue;
          this.known.set(op.key, { seq, line: '' });
        }
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
