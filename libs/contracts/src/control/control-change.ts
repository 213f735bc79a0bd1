/**
 * A change of several entries (an import, a reconcile) travels through the bucket as one unit:
 * its writes in parts (`change.part.<n>`, each under NATS max_payload), then one commit entry
 * (`change.commit`) naming them. A reader applies the parts only when the commit arrives and
 * every part it names is there, so it sees all of the change or none of it. See
 * docs/architecture.md, "A change of many entries".
 */

/** Bucket keys of a change; a reader never takes them for quota or provider entries. */
export const CHANGE_COMMIT_KEY = 'change.commit';
const CHANGE_PART_PREFIX = 'change.part.';
/** Part slots are reused by every change, so their number stays bounded. */
const PART_INDEX = /^(0|[1-9][0-9]{0,5})$/;

/** One write of a change: put `value` under `key`, or delete `key` (value null). */
export type ChangeOp = readonly [key: string, value: string | null];

export interface ChangePart {
  readonly id: string;
  readonly index: number;
  readonly ops: readonly ChangeOp[];
}

export interface ChangeCommit {
  readonly id: string;
  /** Parts 0 .. parts-1 of this id make the change. */
  readonly parts: number;
  /** Writes in all its parts: a reader checks it holds them all. */
  readonly ops: number;
}

export type ChangeReading<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export function changePartKey(index: number): string {
  return CHANGE_PART_PREFIX + String(index);
}

/** The part slot a key names, or undefined for any other key. */
export function changePartIndex(key: string): number | undefined {
  if (!key.startsWith(CHANGE_PART_PREFIX)) return undefined;
  const index = key.slice(CHANGE_PART_PREFIX.length);
  return PART_INDEX.test(index) ? Number(index) : undefined;
}

/**
 * Packs `ops` into parts of at most `maxPartBytes` (UTF-8) each, in order, and the commit that
 * names them. An op larger than a part on its own gets a part of its own (JetStream refuses it
 * if it exceeds max_payload: the change then fails as a whole, before its commit).
 */
export function encodeChange(
  id: string,
  ops: readonly ChangeOp[],
  maxPartBytes: number,
): { parts: string[]; commit: string } {
  const head = (index: number): string => `{"id":${JSON.stringify(id)},"index":${index},"ops":[`;
  const parts: string[] = [];
  let current: string[] = [];
  let bytes = Buffer.byteLength(head(0)) + 2;
  const close = (): void => {
    parts.push(`${head(parts.length)}${current.join(',')}]}`);
    current = [];
    bytes = Buffer.byteLength(head(parts.length)) + 2;
  };
  for (const op of ops) {
    const text = JSON.stringify(op);
    const size = Buffer.byteLength(text) + 1;
    if (current.length > 0 && bytes + size > maxPartBytes) close();
    current.push(text);
    bytes += size;
  }
  if (current.length > 0) close();
  const commit: ChangeCommit = { id, parts: parts.length, ops: ops.length };
  return { parts, commit: JSON.stringify(commit) };
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function parseJson(key: string, raw: string): ChangeReading<unknown> {
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { ok: false, reason: `${key}: is not JSON (${(error as Error).message})` };
  }
}

/** Reads the part stored under `key` (a changePartKey). */
export function readChangePart(key: string, raw: string): ChangeReading<ChangePart> {
  const index = changePartIndex(key);
  if (index === undefined) return { ok: false, reason: `${key}: is not a change part` };
  const json = parseJson(key, raw);
  if (!json.ok) return json;
  const part = json.value;
  if (!isObject(part) || typeof part['id'] !== 'string' || part['index'] !== index) {
    return { ok: false, reason: `${key}: must be { id, index: ${index}, ops }` };
  }
  const ops = part['ops'];
  if (!Array.isArray(ops)) return { ok: false, reason: `${key}: ops: must be a list` };
  for (const [i, op] of (ops as unknown[]).entries()) {
    if (
      !Array.isArray(op) ||
      op.length !== 2 ||
      typeof op[0] !== 'string' ||
      (typeof op[1] !== 'string' && op[1] !== null)
    ) {
      return { ok: false, reason: `${key}: ops[${i}]: must be [key, value or null]` };
    }
  }
  return { ok: true, value: { id: part['id'], index, ops: ops as ChangeOp[] } };
}

/** Reads the commit entry (CHANGE_COMMIT_KEY). */
export function readChangeCommit(raw: string): ChangeReading<ChangeCommit> {
  const json = parseJson(CHANGE_COMMIT_KEY, raw);
  if (!json.ok) return json;
  const commit = json.value;
  if (
    !isObject(commit) ||
    typeof commit['id'] !== 'string' ||
    !isCount(commit['parts']) ||
    !isCount(commit['ops'])
  ) {
    return { ok: false, reason: `${CHANGE_COMMIT_KEY}: must be { id, parts, ops }` };
  }
  return { ok: true, value: { id: commit['id'], parts: commit['parts'], ops: commit['ops'] } };
}
