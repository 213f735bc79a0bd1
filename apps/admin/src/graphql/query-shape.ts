import {
  Kind,
  visit,
  type DocumentNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/*
 * The shape of a document, measured before the spec's validation runs on it (its cost grows
 * with the document): how many selections it writes, how many it spreads out to, how many root
 * fields each operation asks for, how deep it goes.
 */

/** Fields and fragment spreads written in the document. */
export const MAX_SELECTIONS = 300;
/**
 * Selections of one operation with its fragments spread out (a fragment spread twice counts
 * twice): GraphiQL's introspection is 239. The cost rule walks them all, and gives
 * up with an unclear error past 10 000.
 */
export const MAX_EXPANDED_SELECTIONS = 5_000;
/**
 * Root fields (aliases count: each one is resolved on its own, and a root field reads the store
 * or asks the limiters). A console page asks for a handful.
 */
export const MAX_ROOT_FIELDS = 20;
/** Deeper than any honest query of this schema (Quota → limits → field is 3). */
export const MAX_QUERY_DEPTH = 8;
/**
 * The schema's own fields (`__schema`, `__type`) are measured by the lists they nest instead:
 * `types → fields → args` is the deepest GraphiQL asks for. The schema is fixed and small, so
 * with this and MAX_SELECTIONS their cost is bounded; the query's cost leaves them out.
 */
export const MAX_INTROSPECTION_LISTS = 3;
const SCHEMA_ROOTS: ReadonlySet<string> = new Set(['__schema', '__type']);
const SCHEMA_LISTS: ReadonlySet<string> = new Set([
  'types',
  'directives',
  'fields',
  'args',
  'interfaces',
  'possibleTypes',
  'enumValues',
  'inputFields',
]);

/** Why the document is refused before validation, or undefined. */
export function shapeProblem(document: DocumentNode): string | undefined {
  let selections = 0;
  visit(document, {
    Field: () => void selections++,
    FragmentSpread: () => void selections++,
  });
  if (selections > MAX_SELECTIONS) {
    return `the document has ${selections} selections (fields and fragment spreads); at most ${MAX_SELECTIONS}`;
  }
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  }
  const reach = new Reach(fragments);
  for (const d of document.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    const roots = rootFields(d.selectionSet, fragments, new Set()).size;
    if (roots > MAX_ROOT_FIELDS) {
      return `the operation asks for ${roots} root fields (aliases included); at most ${MAX_ROOT_FIELDS}`;
    }
    const { depth, lists, expanded } = reach.of(d.selectionSet, false);
    if (expanded > MAX_EXPANDED_SELECTIONS) {
      return `the operation has ${expanded} selections with its fragments spread out; at most ${MAX_EXPANDED_SELECTIONS}`;
    }
    if (depth > MAX_QUERY_DEPTH) {
      return `the operation is ${depth} fields deep; at most ${MAX_QUERY_DEPTH}`;
    }
    if (lists > MAX_INTROSPECTION_LISTS) {
      return `the operation nests ${lists} lists of the schema (types, fields, args, …); at most ${MAX_INTROSPECTION_LISTS}`;
    }
  }
  return undefined;
}

/** How deep a selection set goes, fragments included (each measured once). */
class Reach {
  private readonly measured = new Map<string, Depths>();
  private readonly open = new Set<string>();

  constructor(private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>) {}

  /** `inside`: within `__schema` or `__type`. */
  of(set: SelectionSetNode, inside: boolean): Depths {
    let depth = 0;
    let lists = 0;
    let expanded = 0;
    for (const selection of set.selections) {
      let below: Depths;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const enters = !inside && SCHEMA_ROOTS.has(name);
        const sub = selection.selectionSet;
        const under = sub === undefined ? NONE : this.of(sub, inside || enters);
        below = inside
          ? { ...under, depth: 0, lists: under.lists + (SCHEMA_LISTS.has(name) ? 1 : 0) }
          : { ...under, depth: 1 + under.depth };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        below = this.of(selection.selectionSet, inside);
      } else {
        below = this.fragment(selection.name.value, inside);
      }
      depth = Math.max(depth, below.depth);
      lists = Math.max(lists, below.lists);
      expanded += 1 + below.expanded;
    }
    return { depth, lists, expanded };
  }

  private fragment(name: string, inside: boolean): Depths {
    const key = `${inside ? 'in' : 'out'}:${name}`;
    const known = this.measured.get(key);
    if (known !== undefined) return known;
    const fragment = this.fragments.get(name);
    // Unknown or cyclic: validation refuses it; it adds nothing here.
    if (fragment === undefined || this.open.has(key)) return NONE;
    this.open.add(key);
    const depths = this.of(fragment.selectionSet, inside);
    this.open.delete(key);
    this.measured.set(key, depths);
    return depths;
  }
}

interface Depths {
  /** Fields nested outside the schema's own fields. */
  readonly depth: number;
  /** Lists nested inside `__schema` / `__type`. */
  readonly lists: number;
  /** Selections, each fragment counted as often as it is spread. */
  readonly expanded: number;
}

const NONE: Depths = { depth: 0, lists: 0, expanded: 0 };

/** The response keys (alias or name) a selection set gives its object, fragments included. */
function rootFields(
  set: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  visited: Set<string>,
  keys = new Set<string>(),
): Set<string> {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) keys.add(selection.alias?.value ?? selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT) {
      rootFields(selection.selectionSet, fragments, visited, keys);
    } else if (!visited.has(selection.name.value)) {
      visited.add(selection.name.value);
      const fragment = fragments.get(selection.name.value);
      if (fragment !== undefined) rootFields(fragment.selectionSet, fragments, visited, keys);
    }
  }
  return keys;
}
