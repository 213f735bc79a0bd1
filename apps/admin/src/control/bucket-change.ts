import {
  BucketView,
  CHANGE_COMMIT_KEY,
  changePartIndex,
  changePartKey,
  encodeChange,
  type ChangeOp,
  type EntryOpener,
  type Refusal,
} from '@app/contracts';
import type { KV, KvEntry } from 'nats';
import { randomUUID } from 'node:crypto';
import type { BucketWrites } from './bucket-writes';
import { inWindows } from './in-windows';
import { Turns } from './turns';

/**
 * The KV side of a control change (see docs/architecture.md, "A change of many entries"): one
 * write is one entry; several travel as parts, then a commit the limiters apply all at once,
 * then the settle (the entries written under their own keys, the commit and parts deleted).
 */

export interface ChangeOptions {
  /** KV writes in flight at once. */
  readonly window: number;
  /** Largest part value, under the server's max_payload. */
  readonly partBytes: number;
  /** Called once the change is in force on the limiters (before its settle). */
  readonly committed?: () => void;
}

/** Parts in flight at once: each is up to partBytes, so fewer than single writes. */
const PART_WINDOW = 8;

/**
 * Writes `ops`. One op is one KV write. More are staged in parts, committed with one entry
 * (from then on the limiters serve all of them), then settled: each written under its own key
 * (entries equal to what the limiters serve: no change for them), the commit deleted, then the
 * parts. Dying anywhere in between leaves a bucket that serves the old set (no commit) or the
 * new one (commit); the next reconcile (finishChange) clears the rest.
 */
export async function writeChange(
  kv: BucketWrites,
  asked: readonly ChangeOp[],
  options: ChangeOptions,
): Promise<void> {
  // The settle writes in parallel: one write per key, its last, as the commit applies them.
  const ops = [...new Map(asked.map((op) => [op[0], op])).values()];
  if (ops.length > 1) {
    const { parts, commit } = encodeChange(randomUUID(), ops, options.partBytes);
    await inWindows([...parts.entries()], PART_WINDOW, async ([index, part]) => {
      await kv.put(changePartKey(index), part);
    });
    await kv.put(CHANGE_COMMIT_KEY, commit);
    options.committed?.();
    await writeOps(kv, ops, options.window);
    await clearTraces(kv, { commit: true, parts: parts.map((_, index) => index) }, options.window);
    return;
  }
  await writeOps(kv, ops, options.window);
  options.committed?.();
}

/** A write in the bucket that the admin's key did not sign (or an older one it did). */
export interface Foreign {
  readonly key: string;
  readonly refusal: Refusal;
  readonly reason: string;
}

/** Foreign writes described at most, per read or per restore; the rest are counted. */
export const FOREIGN_SHOWN = 50;

/** The bucket read: what the limiters serve, and what is stored under each entry's own key. */
export interface BucketRead {
  readonly view: BucketView<string>;
  /**
   * Entry keys whose last write is a put: the payload the limiters take from it, or null when
   * they refuse it (not signed by the admin's key).
   */
  readonly stored: ReadonlyMap<string, string | null>;
  /** Foreign writes found (the first FOREIGN_SHOWN), and how many in all. */
  readonly foreign: readonly Foreign[];
  readonly foreignCount: number;
}

/**
 * Ends what a dead admin (or a failed write) left of a change, without changing what the
 * limiters serve: a committed change's entries not yet under their own keys are written there as
 * the view serves them (so deleting its commit changes nothing), then the commit and every part
 * go. Parts without a commit were never served: they are just deleted. Answers how many entries
 * it wrote.
 */
export async function finishChange(
  kv: BucketWrites,
  read: BucketRead,
  window: number,
): Promise<number> {
  const { view, stored } = read;
  const ops: ChangeOp[] = [];
  for (const key of new Set(view.committedKeys ?? [])) {
    const served = view.entries.get(key)?.raw;
    if (stored.get(key) !== served) ops.push([key, served ?? null]);
  }
  await writeOps(kv, ops, window);
  await clearTraces(kv, view.changeTraces, window);
  return ops.length;
}

/**
 * The bucket as the limiters serve it: every entry read through a watch's replay (one pass, in
 * stream order, so a commit is applied where the limiters apply it), opened as the limiters open
 * it (`opener`: the admin's own public key, when it signs). `idleMs` bounds the wait for each
 * entry. The replay is read in paced turns (Turns), so the admin keeps answering.
 */
export async function readBucket(kv: KV, idleMs: number, opener: EntryOpener): Promise<BucketRead> {
  const foreign: Foreign[] = [];
  let foreignCount = 0;
  let refused = false;
  const view = new BucketView<string>((_key, raw) => ({ ok: true, value: raw }), {
    opener,
    onRefused: (refusal, reason, key) => {
      refused = true;
      if (foreignCount++ < FOREIGN_SHOWN) foreign.push({ key, refusal, reason });
    },
  });
  const stored = new Map<string, string | null>();
  const take = (entry: KvEntry): void => {
    refused = false;
    const raw = entry.string();
    if (entry.operation === 'PUT') view.put(entry.key, raw);
    else view.remove(entry.key, raw);
    if (isChangeKey(entry.key)) return;
    if (entry.operation !== 'PUT') stored.delete(entry.key);
    else stored.set(entry.key, refused ? null : (view.entries.get(entry.key)?.raw ?? null));
  };
  const read = (): BucketRead => ({ view, stored, foreign, foreignCount });
  let initialized = false;
  const watch = await kv.watch({ key: '>', initializedFn: () => (initialized = true) });
  // An empty bucket says so at once, before any entry; otherwise the last entry of the replay
  // is the one with nothing pending behind it.
  if (initialized && watch.getReceived() === 0) {
    watch.stop();
    return read();
  }
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => watch.stop(new Error(`no bucket entry within ${idleMs} ms`)), idleMs);
  };
  arm();
  try {
    const turns = new Turns();
    for await (const entry of watch) {
      take(entry);
      if (entry.delta === 0) break;
      arm();
      await turns.pace();
    }
  } finally {
    clearTimeout(timer);
    watch.stop();
  }
  return read();
}

function isChangeKey(key: string): boolean {
  return key === CHANGE_COMMIT_KEY || changePartIndex(key) !== undefined;
}

async function writeOps(kv: BucketWrites, ops: readonly ChangeOp[], window: number): Promise<void> {
  await inWindows(ops, window, async ([key, value]) => {
    if (value === null) await kv.delete(key);
    else await kv.put(key, value);
  });
}

/** The commit first: parts without it are never applied, whatever is left of them. */
async function clearTraces(
  kv: BucketWrites,
  traces: { readonly commit: boolean; readonly parts: readonly number[] },
  window: number,
): Promise<void> {
  if (traces.commit) await kv.delete(CHANGE_COMMIT_KEY);
  await inWindows(traces.parts, window, async (index) => {
    await kv.delete(changePartKey(index));
  });
}
