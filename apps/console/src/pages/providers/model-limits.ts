/** A model's three limits as the operator types them, checked before they are sent. */
import type { FieldIssue } from '../../api/errors';

export type LimitField = 'maxRpm' | 'maxTpm' | 'maxRpd';

/** The columns of the models table, in order, with the short name an operator knows. */
export const LIMIT_FIELDS: readonly { readonly field: LimitField; readonly label: string }[] = [
  { field: 'maxRpm', label: 'RPM' },
  { field: 'maxTpm', label: 'TPM' },
  { field: 'maxRpd', label: 'RPD' },
];

export type LimitTexts = Record<LimitField, string>;
export type LimitValues = Record<LimitField, number>;

export function limitTexts(values: LimitValues): LimitTexts {
  return {
    maxRpm: String(values.maxRpm),
    maxTpm: String(values.maxTpm),
    maxRpd: String(values.maxRpd),
  };
}

const INTEGER = /^-?\d+$/;

/**
 * The limits as numbers, or an issue per field that is not a whole number. The range (>= 0) is the
 * admin's rule: a negative integer is sent, and its answer shown at the field.
 */
export function parseLimits(
  texts: LimitTexts,
): { ok: true; values: LimitValues } | { ok: false; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  const values: LimitValues = { maxRpm: 0, maxTpm: 0, maxRpd: 0 };
  for (const { field } of LIMIT_FIELDS) {
    const text = texts[field].trim();
    const value = Number(text);
    if (!INTEGER.test(text) || !Number.isSafeInteger(value)) {
      issues.push({ field, message: 'must be an integer >= 0 (0 = unlimited)' });
    } else {
      values[field] = value;
    }
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, values };
}
