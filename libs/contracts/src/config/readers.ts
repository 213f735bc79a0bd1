import type { ConfigPath, IssueList } from './issues';

/**
 * Typed reads of one field of a mapping. Each returns undefined when the field is absent or wrong;
 * a wrong field is recorded in `issues`, and the caller refuses the whole file if any was.
 */

export type Mapping = Readonly<Record<string, unknown>>;

export function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function readMapping(
  value: unknown,
  path: ConfigPath,
  issues: IssueList,
  what: string,
): Mapping | undefined {
  return isMapping(value) ? value : issues.add(path, `must be a mapping (${what})`);
}

/** Unknown fields are refused: in a config file they are typos (`maxsize`) that would silently
 * fall back to a default. */
export function refuseUnknownFields(
  mapping: Mapping,
  allowed: ReadonlySet<string>,
  path: ConfigPath,
  issues: IssueList,
): void {
  for (const field of Object.keys(mapping)) {
    if (!allowed.has(field)) {
      issues.add(
        [...path, field],
        `is not a known field (expected one of: ${[...allowed].join(', ')})`,
      );
    }
  }
}

export function fieldValue(mapping: Mapping, field: string): unknown {
  return Object.prototype.hasOwnProperty.call(mapping, field) ? mapping[field] : undefined;
}

export function readInteger(
  mapping: Mapping,
  field: string,
  path: ConfigPath,
  issues: IssueList,
  range: { readonly min: number; readonly max?: number },
): number | undefined {
  const value = fieldValue(mapping, field);
  if (value === undefined) return undefined;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (
    typeof value === 'number' &&
    Number.isSafeInteger(value) &&
    value >= range.min &&
    value <= max
  ) {
    return value;
  }
  const rule = range.max === undefined ? `>= ${range.min}` : `in ${range.min}..${range.max}`;
  return issues.add([...path, field], `must be an integer ${rule}`);
}

export function readString(
  mapping: Mapping,
  field: string,
  path: ConfigPath,
  issues: IssueList,
  rule: { readonly test: (text: string) => boolean; readonly description: string },
): string | undefined {
  const value = fieldValue(mapping, field);
  if (value === undefined) return undefined;
  if (typeof value === 'string' && rule.test(value)) return value;
  return issues.add([...path, field], rule.description);
}

export function readChoice<Choice extends string>(
  mapping: Mapping,
  field: string,
  path: ConfigPath,
  issues: IssueList,
  choices: readonly Choice[],
): Choice | undefined {
  const value = fieldValue(mapping, field);
  if (value === undefined) return undefined;
  const choice = choices.find((candidate) => candidate === value);
  return choice ?? issues.add([...path, field], `must be one of: ${choices.join(', ')}`);
}

export function readBoolean(
  mapping: Mapping,
  field: string,
  path: ConfigPath,
  issues: IssueList,
): boolean | undefined {
  const value = fieldValue(mapping, field);
  if (value === undefined || typeof value === 'boolean') return value;
  return issues.add([...path, field], 'must be true or false');
}

export function requireField(
  mapping: Mapping,
  field: string,
  path: ConfigPath,
  issues: IssueList,
): boolean {
  if (fieldValue(mapping, field) !== undefined) return true;
  issues.add([...path, field], 'is required');
  return false;
}
