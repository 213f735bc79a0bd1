/** What went wrong with a request, as the console shows it: one message, and issues per field. */

/** One problem with one input field, as the admin's BAD_USER_INPUT names it. */
export interface FieldIssue {
  /** `input.limits[0].window`, `maxRpm`, `document` (line 3). */
  readonly field: string;
  readonly message: string;
}

export type ErrorCode =
  'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'NOT_FOUND' | 'UNAVAILABLE' | 'NETWORK' | 'UNKNOWN';

export class ConsoleError extends Error {
  constructor(
    message: string,
    readonly code: ErrorCode,
    readonly issues: readonly FieldIssue[] = [],
  ) {
    super(message);
    this.name = 'ConsoleError';
  }
}

interface WireError {
  readonly message?: unknown;
  readonly extensions?: { readonly code?: unknown; readonly issues?: unknown };
}

const CODES: readonly ErrorCode[] = [
  'BAD_USER_INPUT',
  'UNAUTHENTICATED',
  'NOT_FOUND',
  'UNAVAILABLE',
];

function isIssue(value: unknown): value is FieldIssue {
  if (typeof value !== 'object' || value === null) return false;
  const { field, message } = value as Record<string, unknown>;
  return typeof field === 'string' && typeof message === 'string';
}

/** The first GraphQL error of a response as a ConsoleError (its issues when it has them). */
export function fromGraphQLErrors(errors: readonly WireError[]): ConsoleError {
  const first = errors[0] ?? {};
  const message =
    typeof first.message === 'string' ? first.message : 'the admin refused the request';
  const raw = first.extensions?.code;
  const code = CODES.find((c) => c === raw) ?? 'UNKNOWN';
  const issues = Array.isArray(first.extensions?.issues)
    ? (first.extensions.issues as unknown[]).filter(isIssue)
    : [];
  return new ConsoleError(message, code, issues);
}

/** Anything thrown, as a ConsoleError. */
export function asConsoleError(error: unknown): ConsoleError {
  if (error instanceof ConsoleError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ConsoleError(message, 'UNKNOWN');
}

/**
 * The issues that belong to one form field. `field` is the path a form control edits:
 * `input.limits[0].window` matches issues on that path and on paths below it.
 */
export function issuesAt(issues: readonly FieldIssue[], field: string): readonly FieldIssue[] {
  return issues.filter(
    (i) => i.field === field || i.field.startsWith(`${field}.`) || i.field.startsWith(`${field}[`),
  );
}

/** The issues no field of `fields` claims: shown above the form so none is lost. */
export function unclaimedIssues(
  issues: readonly FieldIssue[],
  fields: readonly string[],
): readonly FieldIssue[] {
  return issues.filter((i) => !fields.some((f) => issuesAt([i], f).length > 0));
}
