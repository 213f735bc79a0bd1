import {
  BucketView,
  CHANGE_COMMIT_KEY,
  changePartKey,
  encodeChange,
  type ChangeOp,
} from '@app/contracts';
import type { KV, KvEntry } from 'nats';
import { randomUUID } from 'node:crypto';
import { inWindows } from './in-windows';

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
  kv: KV,
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

/** The bucket read: what the limiters serve, and what is stored under each entry's own key. */
export interface BucketRead {
  readonly view: BucketView<string>;
  readonly stored: ReadonlyMap<string, string>;
}

/**
 * Ends what a dead admin (or a failed write) left of a change, without changing what the
 * limiters serve: a committed change's entries not yet under their own keys are written there as
 * the view serves them (so deleting its commit changes nothing), then the commit and every part
 * go. Parts without a commit were never served: they are just deleted. Answers how many entries
 * it wrote.
 */
export async function finishChange(kv: KV, read: BucketRead, window: number): Promise<number> {
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
 * stream order, so a commit is applied where the limiters apply it). `idleMs` bounds the wait
 * for each entry.
 */
export async function readBucket(kv: KV, idleMs: number): Promise<BucketRead> {
  const view = new BucketView<string>((_key, raw) => ({ ok: true, value: raw }));
  const stored = new Map<string, string>();
  const read = { view, stored };
  let initialized = false;
  const watch = await kv.watch({ key: '>', initializedFn: () => (initialized = true) });
  // An empty bucket says so at once, before any entry; otherwise the last entry of the replay
  // is the one with nothing pending behind it.
  if (initialized && watch.getReceived() === 0) {
    watch.stop();
    return read;
  }
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => watch.stop(new Error(`no bucket entry within ${idleMs} ms`)), idleMs);
  };
  arm();
  try {
    for await (const entry of watch) {
      take(read, entry);
      if (entry.delta === 0) break;
      arm();
    }
  } finally {
    clearTimeout(timer);
    watch.stop();
  }
  return read;
}

function take(
  { view, stored }: { view: BucketView<string>; stored: Map<string, string> },
  entry: KvEntry,
): void {
  if (entry.operation === 'PUT') {
    const raw = entry.string();
    view.put(entry.key, raw);
    stored.set(entry.key, raw);
  } else {
    view.remove(entry.key);
    stored.delete(entry.key);
  }
}

async function writeOps(kv: KV, ops: readonly ChangeOp[], window: number): Promise<void> {
  await inWindows(ops, window, async ([key, value]) => {
    if (value === null) await kv.delete(key);
    else await kv.put(key, value);
  });
}

/** The commit first: parts without it are never applied, whatever is left of them. */
async function clearTraces(
  kv: KV,
  traces: { readonly commit: boolean; readonly parts: readonly number[] },
  window: number,
): Promise<void> {
  if (traces.commit) await kv.delete(CHANGE_COMMIT_KEY);
  await inWindows(traces.parts, window, async (index) => {
    await kv.delete(changePartKey(index));
  });
}
