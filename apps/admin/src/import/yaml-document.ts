import {
  ConfigError,
  formatConfigPath,
  type ConfigIssue,
  type ConfigPath,
  type IssueList,
} from '@app/contracts';
import {
  Composer,
  CST,
  isMap,
  isNode,
  isScalar,
  LineCounter,
  Parser,
  visit,
  type Document,
} from 'yaml';
import { IMPORT_SOURCE } from './import-plan';

/**
 * The imported document, parsed with the options parseConfigFile uses (YAML 1.2, JSON being YAML;
 * duplicate keys refused; at most 100 aliases expanded) plus the checks below, and kept as nodes
 * so problems found in its values can be reported at their line. Native and GoCC documents are then
 * read by parseConfigFile itself, which parses them once more: by then they are known to be safe.
 */
export interface ParsedDocument {
  readonly doc: Document;
  readonly lines: LineCounter;
  /** The document as plain JS; never null or undefined. */
  readonly root: unknown;
}

const MAX_ALIAS_COUNT = 100;
export const TOO_DEEP = 'is nested too deeply to be read';
/** Issues located by line; beyond this, searching the document for each costs too much. */
const MAX_LOCATED_ISSUES = 1000;

export function refuse(message: string, path = '', line?: number, column?: number): never {
  const issue: ConfigIssue = {
    path,
    message,
    ...(line !== undefined && { line }),
    ...(column !== undefined && { column }),
  };
  throw new ConfigError([issue], IMPORT_SOURCE);
}

/**
 * Mapping keys must be plain scalars: a list, mapping, alias or timestamp as a key would become a
 * made-up string in JS (and the `yaml` package would print a process warning for each document).
 */
function refuseComplexKeys(doc: Document, lines: LineCounter): void {
  const issues: ConfigIssue[] = [];
  visit(doc, {
    Pair(_, pair) {
      const key: unknown = pair.key;
      if (
        key === null ||
        (isScalar(key) && (typeof key.value !== 'object' || key.value === null))
      ) {
        return undefined;
      }
      const position = positionOf(lines, key);
      issues.push({
        path: '',
        ...position,
        message: 'has a key that is not a plain name (a list, mapping, alias or timestamp)',
      });
      return issues.length >= MAX_LOCATED_ISSUES ? visit.BREAK : undefined;
    },
  });
  if (issues.length > 0) throw new ConfigError(issues, IMPORT_SOURCE);
}

/**
 * Collections nested deeper than this are refused before they are composed: the `yaml` package
 * composes recursively, and near the stack limit V8 can abort the whole process (seen: "RegExp
 * compiler allocation failed") instead of throwing. Config documents nest 5 or 6 levels.
 */
export const MAX_NESTING_DEPTH = 64;

/** The first collection nested deeper than MAX_NESTING_DEPTH, found without recursion. */
function tooDeep(tokens: readonly CST.Token[]): CST.Token | undefined {
  const pending: { token: CST.Token; depth: number }[] = tokens.map((token) => ({
    token,
    depth: 0,
  }));
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { token, depth } = next;
    if (token.type === 'document') {
      if (token.value !== undefined) pending.push({ token: token.value, depth });
      continue;
    }
    if (!CST.isCollection(token)) continue;
    if (depth >= MAX_NESTING_DEPTH) return token;
    for (const item of token.items) {
      if (item.key !== undefined && item.key !== null) {
        pending.push({ token: item.key, depth: depth + 1 });
      }
      if (item.value !== undefined) pending.push({ token: item.value, depth: depth + 1 });
    }
  }
  return undefined;
}

/** Unclosed `[` and `{` beyond this are refused before parsing (a few ms instead of seconds). */
const MAX_OPEN_BRACKETS = 1000;

/**
 * Where `[`/`{` outside quotes and comments first exceed MAX_OPEN_BRACKETS unclosed. The `yaml`
 * parser spends time in proportion to size x depth: 4 MiB of `[` takes it about 20 s, against
 * about 7 s for a real 4 MiB config. An estimate suffices: the parsed depth is checked anyway.
 */
function bracketFlood(text: string): number | undefined {
  let depth = 0;
  let quote = '';
  let comment = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (comment) {
      comment = char !== '\n' && char !== '\r';
    } else if (quote !== '') {
      if (char === '\\' && quote === '"') index += 1;
      else if (char === quote) quote = '';
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === '#') {
      comment = index === 0 || /\s/.test(text[index - 1] ?? '');
    } else if (char === '[' || char === '{') {
      depth += 1;
      if (depth > MAX_OPEN_BRACKETS) return index;
    } else if ((char === ']' || char === '}') && depth > 0) {
      depth -= 1;
    }
  }
  return undefined;
}

/** parseDocument's steps, with the depth checked between parsing and composing. */
function compose(text: string, lines: LineCounter): Document {
  const flood = bracketFlood(text);
  if (flood !== undefined) {
    const line = text.slice(0, flood).split(/\r\n|\r|\n/).length;
    refuse(`opens more than ${MAX_OPEN_BRACKETS} [ or { without closing them`, '', line);
  }
  const tokens = [...new Parser(lines.addNewLine).parse(text)];
  const deep = tooDeep(tokens);
  if (deep !== undefined) {
    const { line, col } = lines.linePos(deep.offset);
    refuse(`nests collections more than ${MAX_NESTING_DEPTH} levels deep`, '', line, col);
  }
  const composer = new Composer({ prettyErrors: false, uniqueKeys: true, logLevel: 'error' });
  let first: Document | undefined;
  for (const doc of composer.compose(tokens, true, text.length)) {
    if (first === undefined) {
      first = doc;
      continue;
    }
    const { line, col } = lines.linePos(doc.range[0]);
    refuse('holds several YAML documents (---): import one at a time', '', line, col);
  }
  // compose(..., forceDoc: true) always yields a document, empty text included.
  if (first === undefined) refuse('is empty: there is nothing to import');
  return first;
}

/** Throws ConfigError for syntax errors, alias bombs, deep nesting and empty documents. */
export function parseYaml(text: string): ParsedDocument {
  const lines = new LineCounter();
  const doc = compose(text, lines);
  if (doc.errors.length > 0) {
    // The parser reports a stack overflow once per level it unwinds: say it once, plainly.
    if (doc.errors.some((error) => /call stack/i.test(error.message))) refuse(TOO_DEEP);
    const issues = doc.errors.map((error): ConfigIssue => {
      const { line, col } = lines.linePos(error.pos[0]);
      return { path: '', line, column: col, message: error.message };
    });
    throw new ConfigError(issues, IMPORT_SOURCE);
  }
  refuseComplexKeys(doc, lines);
  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    refuse(error instanceof Error ? error.message : String(error));
  }
  if (root === null || root === undefined) refuse('is empty: there is nothing to import');
  return { doc, lines, root };
}

function positionOf(
  lines: LineCounter,
  node: unknown,
): { line: number; column: number } | undefined {
  if (!isNode(node) || node.range === undefined || node.range === null) return undefined;
  const { line, col } = lines.linePos(node.range[0]);
  return { line, column: col };
}

/**
 * Where a field is: the line of its key, else of the deepest node on the path that exists, so a
 * missing field points at the mapping it belongs in (as parseConfigFile reports).
 */
export function locate(
  parsed: ParsedDocument,
  path: ConfigPath,
): { line: number; column: number } | undefined {
  const { doc, lines } = parsed;
  const field = path[path.length - 1];
  const parent: unknown = path.length <= 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
  if (typeof field === 'string' && isMap(parent)) {
    const pair = parent.items.find(
      (item) => isScalar(item.key) && String(item.key.value) === field,
    );
    const position = positionOf(lines, pair?.key);
    if (position !== undefined) return position;
  }
  for (let depth = path.length; depth >= 0; depth -= 1) {
    const node: unknown = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
    const position = positionOf(lines, node);
    if (position !== undefined) return position;
  }
  return undefined;
}

/** Throws the issues found as one ConfigError, in file order; returns when there are none. */
export function throwIssues(parsed: ParsedDocument, issues: IssueList): void {
  if (issues.count === 0) return;
  const located = issues.all.map((issue, index): ConfigIssue => {
    const position = index < MAX_LOCATED_ISSUES ? locate(parsed, issue.path) : undefined;
    return { path: formatConfigPath(issue.path), message: issue.message, ...position };
  });
  located.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  throw new ConfigError(located, IMPORT_SOURCE);
}
