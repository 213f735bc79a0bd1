/** Outcome of validating one message: the normalised value, or the first bad field and why. */

export interface ParseSuccess<T> {
  readonly ok: true;
  readonly value: T;
}

export interface ParseFailure {
  readonly ok: false;
  /** `<field>: <rule>`, ready to send as the reply's `reason`. */
  readonly reason: string;
  /** Dotted path of the bad field (`cost.tokens`, `requests[3].key`), or `body` for the whole. */
  readonly field: string;
}

export type ParseResult<T> = ParseSuccess<T> | ParseFailure;

/** The field name used when the message as a whole is wrong (not JSON, not an object). */
export const BODY_FIELD = 'body';

export function fieldFailure(field: string, rule: string): ParseFailure {
  return { ok: false, reason: `${field}: ${rule}`, field };
}

/** The reason without its leading `<field>: `. */
export function failureRule(failure: ParseFailure): string {
  return failure.reason.slice(failure.field.length + 2);
}

/** Re-roots a failure found inside a nested value, e.g. entry 3 of a batch. */
export function nestFailure(parent: string, failure: ParseFailure): ParseFailure {
  const field = failure.field === BODY_FIELD ? parent : `${parent}.${failure.field}`;
  return fieldFailure(field, failureRule(failure));
}
