import { isMap, isNode, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import type { QuotaSpec } from '../quota-spec';
import { ConfigError, type ConfigIssue } from './config-error';
import { readGoccConfig } from './gocc-config';
import { goccDefaultQuota, GOCC_DEFAULTS, type GoccSettings } from './gocc-default';
import { formatConfigPath, IssueList, type ConfigPath, type PathIssue } from './issues';
import { readNativeConfig } from './native-config';
import { fieldValue, isMapping } from './readers';

export type ConfigFormat = 'native' | 'gocc';

/** A validated config file, normalised for the engine. */
export interface LimiterConfig {
  readonly format: ConfigFormat;
  /** `default` first, then the file's quotas in order. */
  readonly quotas: readonly QuotaSpec[];
  /** Enabled provider profiles (section 1); their model quotas come from providers.ts. */
  readonly providers: readonly string[];
}

export interface ParseConfigOptions {
  /** MAX_REQUESTS, MAX_REQUESTS_IN_QUEUE, WINDOW_MILLIS: the default quota and GoCC fallbacks. */
  readonly gocc?: GoccSettings;
  /** Names the file in error messages. */
  readonly source?: string;
}

/** Aliases beyond this are refused: a few lines of YAML must not expand into gigabytes. */
const MAX_ALIAS_COUNT = 100;

function positionOf(
  lines: LineCounter,
  node: unknown,
): { line: number; column: number } | undefined {
  if (!isNode(node) || node.range === undefined || node.range === null) return undefined;
  const { line, col } = lines.linePos(node.range[0]);
  return { line, column: col };
}

/**
 * Where a field is: the line of its key (`limits:` rather than the list below it), else of the
 * deepest node on the path that exists, so a missing field points at the mapping it belongs in.
 */
function locate(
  doc: Document,
  lines: LineCounter,
  path: ConfigPath,
): { line: number; column: number } | undefined {
  const field = path[path.length - 1];
  const parent: unknown = path.length <= 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
  if (typeof field === 'string' && isMap(parent)) {
    const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === field);
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

function toConfigIssue(doc: Document, lines: LineCounter, issue: PathIssue): ConfigIssue {
  const position = locate(doc, lines, issue.path);
  return { path: formatConfigPath(issue.path), message: issue.message, ...position };
}

function syntaxIssues(doc: Document, lines: LineCounter): ConfigIssue[] {
  return doc.errors.map((error) => {
    const { line, col } = lines.linePos(error.pos[0]);
    return { path: '', line, column: col, message: error.message };
  });
}

/**
 * Parses a config file, YAML or JSON (JSON is YAML), in this project's format or GoCC's
 * `{ "keys": [...] }`. Throws ConfigError naming the line and field of every problem found.
 */
export function parseConfigFile(text: string, options: ParseConfigOptions = {}): LimiterConfig {
  const source = options.source ?? 'config';
  const gocc = options.gocc ?? GOCC_DEFAULTS;
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) throw new ConfigError(syntaxIssues(doc, lines), source);

  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ConfigError([{ path: '', message }], source);
  }
  if (root === null || root === undefined) {
    // An empty file is more likely a half-written one than a wish for no quotas: keep the old.
    throw new ConfigError(
      [{ path: '', message: 'is empty (write `quotas: []` for no quotas)' }],
      source,
    );
  }
  if (!isMapping(root)) {
    const message = 'must be a mapping with quotas, defaults, providers (or GoCC keys)';
    throw new ConfigError([{ path: '', line: 1, column: 1, message }], source);
  }

  const issues = new IssueList();
  let config: LimiterConfig;
  if (fieldValue(root, 'keys') !== undefined) {
    if (fieldValue(root, 'quotas') !== undefined || fieldValue(root, 'defaults') !== undefined) {
      issues.add(['keys'], 'GoCC `keys` cannot be mixed with `quotas` or `defaults`');
    }
    config = { format: 'gocc', quotas: readGoccConfig(root, gocc, issues), providers: [] };
  } else {
    config = { format: 'native', ...readNativeConfig(root, goccDefaultQuota(gocc), issues) };
  }
  if (issues.count > 0) {
    const located = issues.all.map((issue) => toConfigIssue(doc, lines, issue));
    // In file order, so the message reads top to bottom like the file.
    located.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
    throw new ConfigError(located, source);
  }
  return config;
}
