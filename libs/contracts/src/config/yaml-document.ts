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
import { ConfigError, type ConfigIssue } from './config-error';
import { formatConfigPath, type ConfigPath, type IssueList } from './issues';

/**
 * A YAML (or JSON) document parsed safely and kept as nodes, so a problem found in its values can
 * be reported at its line. Used for CONFIG_FILE and for the admin's importConfig.
 */
export interface ParsedYaml {
  readonly doc: Document;
  readonly lines: LineCounter;
  /** The document as plain JS; never null or undefined. */
  readonly root: unknown;
  /** Names the document in errors: a file path, `document`. */
  readonly source: string;
}

/** Aliases beyond this are refused: a few lines of YAML must not expand into gigabytes. */
const MAX_ALIAS_COUNT = 100;
/** Issues located by line; beyond this, searching the document for each costs too much. */
const MAX_LOCATED_ISSUES = 1000;
/**
 * Collections nested deeper than this are refused before they are composed: the `yaml` package
 * composes recursively, and near the stack limit V8 can abort the whole process (seen: "RegExp
 * compiler allocation failed") instead of throwing. Config documents nest 5 or 6 levels.
 */
export const MAX_NESTING_DEPTH = 64;
/** Unclosed `[` and `{` beyond this are refused before parsing (a few ms instead of seconds). */
const MAX_OPEN_BRACKETS = 1000;
export const TOO_DEEP = 'is nested too deeply to be read';

function refuse(source: string, message: string, line?: number, column?: number): never {
  const issue: ConfigIssue = {
    path: '',
    message,
    ...(line !== undefined && { line }),
    ...(column !== undefined && { column }),
  };
  throw new ConfigError([issue], source);
}

function positionOf(
  lines: LineCounter,
  node: unknown,
): { line: number; column: number } | undefined {
  if (!isNode(node) || node.range === undefined || node.range === null) return undefined;
  const { line, col } = lines.linePos(node.range[0]);
  return { line, column: col };
}

/** The first collection nested deeper than MAX_NESTING_DEPTH, found without recursion. */
function tooDeep(tokens: readonly CST.Token[]): CST.Token | undefined {
  const pending = tokens.map((token) => ({ token, depth: 0 }));
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

/**
 * Mapping keys must be plain scalars: a list, mapping, alias or timestamp as a key would become a
 * made-up string in JS (and the `yaml` package would print a process warning for each document).
 */
function refuseComplexKeys(doc: Document, lines: LineCounter, source: string): void {
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
      issues.push({
        path: '',
        ...positionOf(lines, key),
        message: 'has a key that is not a plain name (a list, mapping, alias or timestamp)',
      });
      return issues.length >= MAX_LOCATED_ISSUES ? visit.BREAK : undefined;
    },
  });
  if (issues.length > 0) throw new ConfigError(issues, source);
}

/** parseDocument's steps, with the nesting checked between parsing and composing. */
function compose(text: string, lines: LineCounter, source: string): Document | undefined {
  const flood = bracketFlood(text);
  if (flood !== undefined) {
    const line = text.slice(0, flood).split(/\r\n|\r|\n/).length;
    refuse(source, `opens more than ${MAX_OPEN_BRACKETS} [ or { without closing them`, line);
  }
  const tokens = [...new Parser(lines.addNewLine).parse(text)];
  const deep = tooDeep(tokens);
  if (deep !== undefined) {
    const { line, col } = lines.linePos(deep.offset);
    refuse(source, `nests collections more than ${MAX_NESTING_DEPTH} levels deep`, line, col);
  }
  const composer = new Composer({ prettyErrors: false, uniqueKeys: true, logLevel: 'error' });
  let first: Document | undefined;
  for (const doc of composer.compose(tokens, true, text.length)) {
    if (first === undefined) {
      first = doc;
      continue;
    }
    const { line, col } = lines.linePos(doc.range[0]);
    refuse(source, 'holds several YAML documents (---): give one at a time', line, col);
  }
  return first;
}

function parseChecked(text: string, source: string, emptyMessage: string): ParsedYaml {
  const lines = new LineCounter();
  // compose(..., forceDoc: true) always yields a document, empty text included.
  const doc = compose(text, lines, source) ?? refuse(source, emptyMessage);
  if (doc.errors.length > 0) {
    // The parser reports a stack overflow once per level it unwinds: say it once, plainly.
    if (doc.errors.some((error) => /call stack/i.test(error.message))) refuse(source, TOO_DEEP);
    const issues = doc.errors.map((error): ConfigIssue => {
      const { line, col } = lines.linePos(error.pos[0]);
      return { path: '', line, column: col, message: error.message };
    });
    throw new ConfigError(issues, source);
  }
  refuseComplexKeys(doc, lines, source);
  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    refuse(source, error instanceof Error ? error.message : String(error));
  }
  if (root === null || root === undefined) refuse(source, emptyMessage);
  return { doc, lines, root, source };
}

/**
 * Parses YAML 1.2 (JSON being YAML) with duplicate keys, complex keys, alias bombs, deep nesting
 * and several documents refused. Throws only ConfigError, whatever the text: any other failure
 * (a stack overflow among them) is reported as one.
 */
export function parseYaml(text: string, source: string, emptyMessage: string): ParsedYaml {
  try {
    return parseChecked(text, source, emptyMessage);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    if (error instanceof RangeError) refuse(source, TOO_DEEP);
    refuse(source, `could not be read (${error instanceof Error ? error.message : String(error)})`);
  }
}

/**
 * Where a field is: the line of its key (`limits:` rather than the list below it), else of the
 * deepest node on the path that exists, so a missing field points at the mapping it belongs in.
 */
export function locateField(
  parsed: ParsedYaml,
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
export function throwLocatedIssues(parsed: ParsedYaml, issues: IssueList): void {
  if (issues.count === 0) return;
  const located = issues.all.map((issue, index): ConfigIssue => {
    const position = index < MAX_LOCATED_ISSUES ? locateField(parsed, issue.path) : undefined;
    return { path: formatConfigPath(issue.path), message: issue.message, ...position };
  });
  // In file order, so the message reads top to bottom like the file.
  located.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  throw new ConfigError(located, parsed.source);
}
