import type { QuotaSpec } from '../quota-spec';
import { ConfigError } from './config-error';
import { GOCC_FILE_FIELDS } from './config-fields';
import { readGoccConfig } from './gocc-config';
import { goccDefaultQuota, GOCC_DEFAULTS, type GoccSettings } from './gocc-default';
import { IssueList } from './issues';
import { readNativeConfig } from './native-config';
import { fieldValue, isMapping } from './readers';
import { parseYaml, throwLocatedIssues, type ParsedYaml } from './yaml-document';

export type ConfigFormat = 'native' | 'gocc';

/** A validated config file, normalised for the engine. */
export interface LimiterConfig {
  readonly format: ConfigFormat;
  /** `default` first, then the file's quotas in order. */
  readonly quotas: readonly QuotaSpec[];
  /**
   * Enabled provider profiles (docs/contract.md, Concepts); their model quotas come from
   * providers.ts.
   */
  readonly providers: readonly string[];
}

export interface ParseConfigOptions {
  /** MAX_REQUESTS, MAX_REQUESTS_IN_QUEUE, WINDOW_MILLIS: the default quota and GoCC fallbacks. */
  readonly gocc?: GoccSettings;
  /** Names the file in error messages. */
  readonly source?: string;
}

/** An empty file is more likely a half-written one than a wish for no quotas: keep the old. */
const EMPTY_FILE = 'is empty (write `quotas: []` for no quotas)';

/**
 * Parses a config file, YAML or JSON (JSON is YAML), in this project's format or GoCC's
 * `{ "keys": [...] }`. Throws ConfigError naming the line and field of every problem found, and
 * nothing else whatever the text.
 */
export function parseConfigFile(text: string, options: ParseConfigOptions = {}): LimiterConfig {
  return readConfigDocument(parseYaml(text, options.source ?? 'config', EMPTY_FILE), options);
}

/** parseConfigFile's second half, for a document already parsed (the admin's import). */
export function readConfigDocument(
  parsed: ParsedYaml,
  options: Pick<ParseConfigOptions, 'gocc'> = {},
): LimiterConfig {
  const { root, source } = parsed;
  const gocc = options.gocc ?? GOCC_DEFAULTS;
  if (!isMapping(root)) {
    const message = 'must be a mapping with quotas, defaults, providers (or GoCC keys)';
    throw new ConfigError([{ path: '', line: 1, column: 1, message }], source);
  }

  const issues = new IssueList();
  let config: LimiterConfig;
  if (fieldValue(root, GOCC_FILE_FIELDS.keys) !== undefined) {
    if (fieldValue(root, 'quotas') !== undefined || fieldValue(root, 'defaults') !== undefined) {
      issues.add(
        [GOCC_FILE_FIELDS.keys],
        'GoCC `keys` cannot be mixed with `quotas` or `defaults`',
      );
    }
    config = { format: 'gocc', quotas: readGoccConfig(root, gocc, issues), providers: [] };
  } else {
    config = { format: 'native', ...readNativeConfig(root, goccDefaultQuota(gocc), issues) };
  }
  throwLocatedIssues(parsed, issues);
  return config;
}
