/**
 * What one audit entry changed: the two JSON documents (before, after) compared leaf by leaf, as
 * a list of paths an operator can read (`limits[0].limit: 100 -> 200`). Pure: no DOM.
 */

export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type Change =
  | {
      readonly kind: 'changed';
      readonly path: string;
      readonly before: JsonValue;
      readonly after: JsonValue;
    }
  | { readonly kind: 'added'; readonly path: string; readonly after: JsonValue }
  | { readonly kind: 'removed'; readonly path: string; readonly before: JsonValue };

/** The path of the whole document, when it is itself a leaf (a number, say). */
export const ROOT_PATH = '(document)';

type Container = JsonValue[] | { [key: string]: JsonValue };

function isContainer(value: JsonValue): value is Container {
  return typeof value === 'object' && value !== null;
}

function isEmpty(value: Container): boolean {
  return Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0;
}

/** A JSON string as the value it holds; text that is not JSON stays the string it is. */
export function parseJson(text: string | null | undefined): JsonValue | undefined {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (!IDENTIFIER.test(key)) return `${parent}[${JSON.stringify(key)}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

function entries(value: Container): [string | number, JsonValue][] {
  return Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
}

/** Every leaf under `value` (an empty object or array is a leaf), with its path. */
function leaves(value: JsonValue, path: string): [string, JsonValue][] {
  if (!isContainer(value) || isEmpty(value)) return [[path === '' ? ROOT_PATH : path, value]];
  return entries(value).flatMap(([key, child]) => leaves(child, childPath(path, key)));
}

function added(value: JsonValue, path: string): Change[] {
  // A null that appears says nothing an operator needs (absent and null mean the same here).
  return leaves(value, path)
    .filter(([, v]) => v !== null)
    .map(([p, v]) => ({ kind: 'added', path: p, after: v }));
}

function removed(value: JsonValue, path: string): Change[] {
  return leaves(value, path)
    .filter(([, v]) => v !== null)
    .map(([p, v]) => ({ kind: 'removed', path: p, before: v }));
}

function sameKind(a: Container, b: Container): boolean {
  return Array.isArray(a) === Array.isArray(b);
}

function compare(before: JsonValue, after: JsonValue, path: string): Change[] {
  if (isContainer(before) && isContainer(after) && sameKind(before, after)) {
    if (isEmpty(before) || isEmpty(after)) {
      if (isEmpty(before) && isEmpty(after)) return [];
      return [...removed(before, path), ...added(after, path)];
    }
    return compareChildren(before, after, path);
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  if (isContainer(before) || isContainer(after)) {
    // A leaf became a container or the other way round: what went, then what came.
    return [...removed(before, path), ...added(after, path)];
  }
  return [{ kind: 'changed', path: path === '' ? ROOT_PATH : path, before, after }];
}

function compareChildren(before: Container, after: Container, path: string): Change[] {
  const changes: Change[] = [];
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    for (let i = 0; i < length; i++) {
      const here = childPath(path, i);
      if (i >= after.length) changes.push(...removed(before[i]!, here));
      else if (i >= before.length) changes.push(...added(after[i]!, here));
      else changes.push(...compare(before[i]!, after[i]!, here));
    }
    return changes;
  }
  const b = before as { [key: string]: JsonValue };
  const a = after as { [key: string]: JsonValue };
  const keys = [...Object.keys(b), ...Object.keys(a).filter((k) => !(k in b))];
  for (const key of keys) {
    const here = childPath(path, key);
    if (!(key in a)) changes.push(...removed(b[key]!, here));
    else if (!(key in b)) changes.push(...added(a[key]!, here));
    else changes.push(...compare(b[key]!, a[key]!, here));
  }
  return changes;
}

/**
 * The changes from `before` to `after`, JSON strings as the audit log holds them. A null before is
 * a creation (every leaf added), a null after a deletion (every leaf removed).
 */
export function diffJson(
  before: string | null | undefined,
  after: string | null | undefined,
): Change[] {
  const b = parseJson(before);
  const a = parseJson(after);
  if (b === undefined && a === undefined) return [];
  if (b === undefined) return added(a!, '');
  if (a === undefined) return removed(b, '');
  return compare(b, a, '');
}

function show(value: JsonValue): string {
  return JSON.stringify(value);
}

/** One change as a line: `limits[0].limit: 100 -> 200`, `queue.maxSize: added 10`. */
export function describeChange(change: Change): string {
  switch (change.kind) {
    case 'changed':
      return `${change.path}: ${show(change.before)} -> ${show(change.after)}`;
    case 'added':
      return `${change.path}: added ${show(change.after)}`;
    case 'removed':
      return `${change.path}: removed ${show(change.before)}`;
  }
}
