import type { VerifyKey } from './control-keys';
import {
  parseSignatureLine,
  splitValue,
  trustedKeys,
  verifyLine,
  type Opened,
} from './control-signature';

/** What a reader of the bucket does with a value before reading its payload. */
export interface EntryOpener {
  /**
   * The payload of a PUT's value, or of a DEL/PURGE's body (`op: 'del'`), with its verified
   * signature line; or why the reader refuses it.
   */
  open(op: 'put' | 'del', key: string, raw: string): Opened;
  /** True when refusals are about signatures (a key is trusted): sequences then order writes. */
  readonly verifies: boolean;
}

/**
 * Without a key (control unauthenticated, as before signing): every write is taken, in stream
 * order; a signature line, if any, is set aside unchecked.
 */
export const UNVERIFIED_OPENER: EntryOpener = {
  verifies: false,
  open: (op, _key, raw) => ({ ok: true, payload: op === 'del' ? '' : splitValue(raw).payload }),
};

/** Takes only what `key` signed for this bucket and key; a delete must be signed too. */
export function verifyingOpener(bucket: string, key: VerifyKey): EntryOpener {
  const trusted = trustedKeys([key]);
  return {
    verifies: true,
    open(op, entryKey, raw) {
      const { line, payload } = splitValue(raw);
      const checked = verifyLine(line, { kind: op, bucket, key: entryKey }, payload, trusted);
      if (!checked.ok) {
        const what = op === 'del' ? 'a delete' : 'a value';
        return { ...checked, reason: `${entryKey}: ${what}: ${checked.reason}` };
      }
      return { ok: true, payload, line: checked.line };
    },
  };
}

/** An opener that remembers what it took (rememberingOpener). */
export interface RememberingOpener extends EntryOpener {
  /** A value this process signed itself: taken later as it is, without a check. */
  remember(op: 'put' | 'del', key: string, raw: string): void;
}

/**
 * `inner`, remembering the last value of each key it took: the very same value again (a watch
 * replaying the bucket, a second read of it, the writer's own write coming back) is taken
 * without checking its signature again. Refused values are not remembered, so what it holds is
 * bounded by the keys signed values were written under. A payload is a slice of its value, so
 * keeping the value costs little more.
 */
export function rememberingOpener(inner: EntryOpener): RememberingOpener {
  type Taken = { readonly op: 'put' | 'del'; readonly raw: string; readonly opened: Opened };
  const taken = new Map<string, Taken>();
  return {
    verifies: inner.verifies,
    open(op, key, raw) {
      const last = taken.get(key);
      if (last !== undefined && last.op === op && last.raw === raw) return last.opened;
      const opened = inner.open(op, key, raw);
      if (opened.ok) taken.set(key, { op, raw, opened });
      return opened;
    },
    remember(op, key, raw) {
      const { line, payload } = splitValue(raw);
      const parsed = line === undefined ? undefined : parseSignatureLine(line);
      if (typeof parsed !== 'object') return;
      taken.set(key, {
        op,
        raw,
        opened: { ok: true, payload: op === 'del' ? '' : payload, line: parsed },
      });
    },
  };
}
