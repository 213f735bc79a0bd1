import {
  ConfigError,
  DEFAULT_QUEUE_MAX_WAIT_MS,
  DEFAULT_QUOTA_NAME,
  fieldValue,
  formatConfigPath,
  formatDuration,
  GOCC_FILE_FIELDS,
  GOCC_KEY_FIELDS,
  isMapping,
  IssueList,
  readConfigDocument,
  throwLocatedIssues,
  type ConfigPath,
  type GoccSettings,
  type LimiterConfig,
  type Mapping,
  type ParsedYaml,
} from '@app/contracts';
import { IMPORT_SOURCE, type ImportPlan } from './import-plan';

/**
 * This project's config file (docs/contract.md, Config file) and GoCC's `{ "keys": [...] }`, both
 * read by the reader of CONFIG_FILE (readConfigDocument). One difference: it always returns a
 * `default` quota, made from the environment when the file sets none; an import leaves the admin's
 * default quota alone unless the document sets it (`defaults:` or a quota named default).
 */

const KNOWN_KEY_FIELDS: ReadonlySet<string> = new Set(Object.values(GOCC_KEY_FIELDS));
const GOCC_FALLBACKS: readonly {
  field: string;
  variable: string;
  value: (settings: GoccSettings) => number;
}[] = [
  {
    field: GOCC_KEY_FIELDS.maxRequests,
    variable: 'MAX_REQUESTS',
    value: (settings) => settings.maxRequests,
  },
  {
    field: GOCC_KEY_FIELDS.maxRequestsInQueue,
    variable: 'MAX_REQUESTS_IN_QUEUE',
    value: (settings) => settings.maxRequestsInQueue,
  },
  {
    field: GOCC_KEY_FIELDS.windowMillis,
    variable: 'WINDOW_MILLIS',
    value: (settings) => settings.windowMillis,
  },
];
const MAX_LISTED_FIELDS = 10;

function setsDefault(root: Mapping): boolean {
  if (fieldValue(root, 'defaults') !== undefined) return true;
  const quotas = fieldValue(root, 'quotas');
  return (
    Array.isArray(quotas) &&
    quotas.some((quota) => isMapping(quota) && fieldValue(quota, 'name') === DEFAULT_QUOTA_NAME)
  );
}

function withoutDefault(config: LimiterConfig): ImportPlan['quotas'] {
  return config.quotas.filter((quota) => quota.name !== DEFAULT_QUOTA_NAME);
}

export function readNativeImport(
  parsed: ParsedYaml,
  root: Mapping,
  gocc: GoccSettings,
): ImportPlan {
  const config = readConfigDocument(parsed, { gocc });
  if (config.format === 'gocc') {
    const plan = goccPlan(config, parsed, root, gocc);
    plan.notes.unshift(
      'The document is GoCC\'s { "keys": [...] } config, which CONFIG_FILE also accepts; it was read as format gocc.',
    );
    return plan;
  }
  const notes: string[] = [];
  let quotas = [...config.quotas];
  if (!setsDefault(root)) {
    quotas = withoutDefault(config);
    notes.push(
      'The document sets no default quota (no `defaults:` and no quota named default), so the ' +
        "admin's default quota is left as it is.",
    );
  }
  return {
    source: 'native',
    quotas,
    enableProviders: [...config.providers],
    models: [],
    usage: [],
    notes,
  };
}

/** GoCC ignores fields it does not know; say which ones were ignored. */
function ignoredGoccFields(root: Mapping): string[] {
  const ignored: ConfigPath[] = Object.keys(root)
    .filter((field) => field !== GOCC_FILE_FIELDS.keys)
    .map((field) => [field]);
  const keys = fieldValue(root, GOCC_FILE_FIELDS.keys);
  if (Array.isArray(keys)) {
    keys.forEach((key: unknown, index) => {
      if (!isMapping(key)) return;
      for (const field of Object.keys(key)) {
        if (!KNOWN_KEY_FIELDS.has(field)) ignored.push([GOCC_FILE_FIELDS.keys, index, field]);
      }
    });
  }
  return ignored.map(formatConfigPath);
}

function goccNotes(root: Mapping, config: LimiterConfig, gocc: GoccSettings): string[] {
  const notes = [
    "GoCC's config has no default quota; keys that match no key_pattern keep the admin's default quota as it is.",
  ];
  const keys = fieldValue(root, GOCC_FILE_FIELDS.keys);
  const items = Array.isArray(keys) ? keys.filter(isMapping) : [];
  for (const { field, variable, value } of GOCC_FALLBACKS) {
    const unset = items.filter((item) => {
      const setting = fieldValue(item, field);
      return setting === undefined || setting === 0;
    }).length;
    if (unset === 0) continue;
    const fallback = value(gocc);
    const shown =
      field === GOCC_KEY_FIELDS.maxRequests && fallback === 0 ? '0 (unlimited)' : fallback;
    notes.push(
      `${unset} of ${items.length} GoCC ${items.length === 1 ? 'key leaves' : 'keys leave'} ${field} ` +
        `unset or 0: ${unset === 1 ? 'it takes' : 'they take'} ${variable} = ${shown} from the admin's ` +
        'environment, fixed at import time.',
    );
  }
  const queued = config.quotas.some(
    (quota) => quota.name !== DEFAULT_QUOTA_NAME && (quota.queue?.maxSize ?? 0) > 0,
  );
  if (queued) {
    notes.push(
      'GoCC lets a queued request wait until a window admits it; here each imported key waits at ' +
        'most as long as its full queue takes to drain, and never less than ' +
        `${formatDuration(DEFAULT_QUEUE_MAX_WAIT_MS)} (queue.maxWaitMs).`,
    );
  }
  const ignored = ignoredGoccFields(root);
  if (ignored.length > 0) {
    const listed = ignored.slice(0, MAX_LISTED_FIELDS).join(', ');
    const more =
      ignored.length > MAX_LISTED_FIELDS ? ` and ${ignored.length - MAX_LISTED_FIELDS} more` : '';
    notes.push(`Fields GoCC does not read were ignored: ${listed}${more}.`);
  }
  return notes;
}

/**
 * The admin's quotas take one pattern each and resolve a key to one of them, so they cannot merge
 * regex entries as CONFIG_FILE does: a regex given twice is refused, each regex keeps its own
 * numbers, and the quotas that stand for merges are left out (a note says so). A literal key's
 * entries were merged already, with every regex that matches it.
 */
function goccPlan(
  config: LimiterConfig,
  parsed: ParsedYaml,
  root: Mapping,
  gocc: GoccSettings,
): ImportPlan {
  refuseRepeatedRegexes(parsed, root);
  const quotas = withoutDefault(config)
    .filter((quota) => quota.match !== undefined)
    .map(({ merge: _merge, ...quota }) => quota);
  const notes = goccNotes(root, config, gocc);
  if (config.quotas.some((quota) => quota.match === undefined && quota.merge !== undefined)) {
    notes.push(
      'GoCC merges the numbers of every regex key_pattern that matches a key, in file order, and ' +
        "so does CONFIG_FILE; the admin's quotas take one pattern per key (the longest literal " +
        'prefix), so a key several regexes match takes the numbers of one of them.',
    );
  }
  return { source: 'gocc', quotas, enableProviders: [], models: [], usage: [], notes };
}

function refuseRepeatedRegexes(parsed: ParsedYaml, root: Mapping): void {
  const keys = fieldValue(root, GOCC_FILE_FIELDS.keys);
  if (!Array.isArray(keys)) return;
  const issues = new IssueList();
  const seen = new Map<string, number>();
  keys.forEach((key: unknown, index) => {
    if (!isMapping(key) || fieldValue(key, GOCC_KEY_FIELDS.isRegex) !== true) return;
    const pattern = fieldValue(key, GOCC_KEY_FIELDS.pattern);
    if (typeof pattern !== 'string') return;
    const first = seen.get(pattern);
    if (first === undefined) seen.set(pattern, index);
    else {
      issues.add(
        [GOCC_FILE_FIELDS.keys, index, GOCC_KEY_FIELDS.pattern],
        `is the same regex as keys[${first}]: the admin keeps one quota per pattern, so give ` +
          'it one entry (CONFIG_FILE merges both, as GoCC does)',
      );
    }
  });
  throwLocatedIssues(parsed, issues);
}

/** Format gocc: the document must be GoCC's (read as format gocc). */
export function readGoccImport(parsed: ParsedYaml, root: Mapping, gocc: GoccSettings): ImportPlan {
  const config = readConfigDocument(parsed, { gocc });
  if (config.format !== 'gocc') {
    throw new ConfigError(
      [{ path: 'keys', message: 'is required: GoCC\'s config is { "keys": [...] }' }],
      IMPORT_SOURCE,
    );
  }
  return goccPlan(config, parsed, root, gocc);
}
