import {
  ConfigError,
  fieldValue,
  IssueList,
  isMapping,
  locateField,
  parseYaml,
  throwLocatedIssues,
  TOO_DEEP,
  type Mapping,
  type ParsedYaml,
} from '@app/contracts';
import { GO_RATELIMIT_MARKERS, goRatelimitMarker, readGoRatelimit } from './go-ratelimit';
import {
  IMPORT_FORMATS,
  IMPORT_SOURCE,
  MAX_IMPORT_DOCUMENT_BYTES,
  refuse,
  type ImportFormat,
  type ImportOptions,
  type ImportPlan,
} from './import-plan';
import { readGoccImport, readNativeImport } from './native-import';

/** Top-level fields of this project's config file, as opposed to GoCC's `keys`. */
const NATIVE_FIELDS = ['quotas', 'defaults', 'providers'] as const;

const YAML_SHAPE =
  "must be a mapping: this project's config (quotas, defaults, providers) or go-ratelimit's " +
  'ratelimits.yaml (quotas, state)';
const GOCC_SHAPE = 'must be GoCC\'s config, a JSON object { "keys": [...] }';

function checkSize(document: string): void {
  // UTF-8 takes at least one byte per UTF-16 unit: a long string is refused without encoding it.
  const bytes =
    document.length > MAX_IMPORT_DOCUMENT_BYTES
      ? document.length
      : Buffer.byteLength(document, 'utf8');
  if (bytes > MAX_IMPORT_DOCUMENT_BYTES) {
    refuse(
      `is more than ${MAX_IMPORT_DOCUMENT_BYTES} bytes (4 MiB), the most an import accepts; ` +
        'split it into several imports',
    );
  }
}

function refuseAt(parsed: ParsedYaml, field: string, message: string): never {
  const position = locateField(parsed, [field]);
  return refuse(message, '', position?.line, position?.column);
}

/**
 * Format yaml: go-ratelimit's ratelimits.yaml when `quotas` is a mapping or one of its own fields
 * appears; else this project's config file. A GoCC document (`keys`) given as yaml is accepted and
 * read as GoCC's: CONFIG_FILE accepts GoCC's config as it is (docs/contract.md, Config file), and
 * JSON is YAML, so refusing it here would refuse a file the limiter itself takes. The plan says
 * `gocc`.
 */
function readYamlImport(parsed: ParsedYaml, root: Mapping, options: ImportOptions): ImportPlan {
  const marker = goRatelimitMarker(root);
  if (marker === undefined) return readNativeImport(parsed, root, options.gocc);
  const issues = new IssueList();
  const plan = readGoRatelimit(root, marker, options.now, issues);
  throwLocatedIssues(parsed, issues);
  return plan;
}

/**
 * Format gocc: GoCC's `{ "keys": [...] }` only (YAML syntax is tolerated, JSON being YAML). This
 * project's file or go-ratelimit's given as gocc is refused with a pointer to format yaml.
 */
function readGoccFormat(parsed: ParsedYaml, root: Mapping, options: ImportOptions): ImportPlan {
  if (fieldValue(root, 'keys') !== undefined) return readGoccImport(parsed, root, options.gocc);
  const marker = goRatelimitMarker(root);
  if (marker !== undefined) {
    const field = ['quotas', ...GO_RATELIMIT_MARKERS].find(
      (name) => fieldValue(root, name) !== undefined,
    );
    refuseAt(
      parsed,
      field ?? 'quotas',
      "is go-ratelimit's ratelimits.yaml, not GoCC's config (it has no `keys`): import it with format yaml",
    );
  }
  const native = NATIVE_FIELDS.find((name) => fieldValue(root, name) !== undefined);
  if (native !== undefined) {
    refuseAt(
      parsed,
      native,
      "is this project's config file, not GoCC's config (it has no `keys`): import it with format yaml",
    );
  }
  const position = locateField(parsed, []);
  return refuse('is required: GoCC\'s config is { "keys": [...] }', 'keys', position?.line);
}

function parseChecked(document: unknown, format: unknown, options: ImportOptions): ImportPlan {
  if (typeof document !== 'string') refuse('must be a string');
  if (!IMPORT_FORMATS.some((known) => known === format)) {
    refuse(`must be one of: ${IMPORT_FORMATS.join(', ')}`, 'format');
  }
  checkSize(document);
  const parsed = parseYaml(document, IMPORT_SOURCE, 'is empty: there is nothing to import');
  const { root } = parsed;
  if (!isMapping(root)) {
    const position = locateField(parsed, []);
    refuse(format === 'gocc' ? GOCC_SHAPE : YAML_SHAPE, '', position?.line, position?.column);
  }
  return format === 'gocc'
    ? readGoccFormat(parsed, root, options)
    : readYamlImport(parsed, root, options);
}

/**
 * Reads a document given to `importConfig(document, format)` into what the admin should change.
 * Every problem is a ConfigError naming line and field (source `document`); no input string makes
 * it throw anything else: an unexpected failure is reported as a ConfigError too.
 *
 * Synchronous and CPU-bound: a 4 MiB document takes the `yaml` package a few seconds.
 */
export function parseImport(
  document: string,
  format: ImportFormat,
  options: ImportOptions,
): ImportPlan {
  try {
    return parseChecked(document, format, options);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    if (error instanceof RangeError) refuse(TOO_DEEP);
    return refuse(`could not be read (${error instanceof Error ? error.message : String(error)})`);
  }
}
