/**
 * The quota editor's state as the operator types it (text everywhere a number goes), and its
 * conversions: from a stored Quota, and to the QuotaInput upsertQuota takes.
 */
import type { FieldIssue } from '../../api/errors';
import type {
  Algorithm,
  LeaseMode,
  LimitInput,
  QuotaFieldsFragment,
  QuotaInput,
  Scope,
  StoreFailurePolicy,
} from '../../api/generated';
import { duration } from '../../ui/format';

export interface LimitForm {
  readonly name: string;
  readonly limit: string;
  /** 1s, 1m, 250ms: sent as `window`, which the admin parses. */
  readonly window: string;
  readonly algorithm: Algorithm;
  readonly unit: string;
  readonly burst: string;
  readonly precision: string;
  /** '' is no alignment. */
  readonly align: '' | 'calendar';
  readonly timezone: string;
}

export interface QuotaForm {
  readonly name: string;
  readonly match: string;
  readonly scope: Scope;
  readonly shadow: boolean;
  readonly clientOverrides: boolean;
  readonly lease: LeaseMode;
  /** '' leaves the admin's default. */
  readonly onStoreFailure: '' | StoreFailurePolicy;
  readonly queueMaxSize: string;
  readonly queueMaxWaitMs: string;
  readonly concurrencyMax: string;
  readonly concurrencyLeaseTtlMs: string;
  readonly limits: readonly LimitForm[];
}

export const EMPTY_LIMIT: LimitForm = {
  name: '',
  limit: '',
  window: '',
  algorithm: 'fixed_window',
  unit: '',
  burst: '',
  precision: '',
  align: '',
  timezone: '',
};

export const EMPTY_QUOTA: QuotaForm = {
  name: '',
  match: '',
  scope: 'local',
  shadow: false,
  clientOverrides: false,
  lease: 'auto',
  onStoreFailure: '',
  queueMaxSize: '',
  queueMaxWaitMs: '',
  concurrencyMax: '',
  concurrencyLeaseTtlMs: '',
  limits: [EMPTY_LIMIT],
};

const text = (value: number | string | null | undefined): string =>
  value === null || value === undefined ? '' : String(value);

/** The form that edits a stored quota: every field as it is now. */
export function formFromQuota(quota: QuotaFieldsFragment): QuotaForm {
  return {
    name: quota.name,
    match: text(quota.match),
    scope: quota.scope,
    shadow: quota.shadow,
    clientOverrides: quota.clientOverrides,
    lease: quota.lease,
    onStoreFailure: quota.onStoreFailure ?? '',
    queueMaxSize: text(quota.queue?.maxSize),
    queueMaxWaitMs: text(quota.queue?.maxWaitMs),
    concurrencyMax: text(quota.concurrency?.max),
    concurrencyLeaseTtlMs: text(quota.concurrency?.leaseTtlMs),
    limits: quota.limits.map((l) => ({
      name: l.name,
      limit: String(l.limit),
      window: duration(l.windowMs),
      algorithm: l.algorithm,
      unit: l.unit,
      burst: text(l.burst),
      precision: text(l.precision),
      align: l.align ?? '',
      timezone: text(l.timezone),
    })),
  };
}

/** The input paths the admin names for each control of the form (`input.limits[0].window`). */
export const quotaPaths = {
  name: 'input.name',
  match: 'input.match',
  scope: 'input.scope',
  shadow: 'input.shadow',
  clientOverrides: 'input.clientOverrides',
  lease: 'input.lease',
  onStoreFailure: 'input.onStoreFailure',
  queueMaxSize: 'input.queue.maxSize',
  queueMaxWaitMs: 'input.queue.maxWaitMs',
  concurrencyMax: 'input.concurrency.max',
  concurrencyLeaseTtlMs: 'input.concurrency.leaseTtlMs',
} as const;

export const LIMIT_FIELDS = [
  'name',
  'limit',
  'window',
  'algorithm',
  'unit',
  'burst',
  'precision',
  'align',
  'timezone',
] as const;

export type LimitField = (typeof LIMIT_FIELDS)[number];

export function limitPath(index: number, field: LimitField): string {
  return `input.limits[${index}].${field}`;
}

/** Every path a control of `form` shows issues for: what is left over goes above the form. */
export function formPaths(form: QuotaForm): string[] {
  return [
    ...Object.values(quotaPaths),
    ...form.limits.flatMap((_, i) => LIMIT_FIELDS.map((f) => limitPath(i, f))),
  ];
}

export type InputOrIssues =
  | { readonly ok: true; readonly input: QuotaInput }
  | { readonly ok: false; readonly issues: readonly FieldIssue[] };

/** Reads the whole-number fields; each problem is an issue at that field's path. */
class NumberReader {
  readonly issues: FieldIssue[] = [];

  /** '' -> undefined (absent); "12" -> 12; anything else is an issue. */
  optional(value: string, path: string): number | undefined {
    const trimmed = value.trim();
    if (trimmed === '') return undefined;
    const whole = /^[+-]?[0-9]+$/.test(trimmed);
    const n = Number(trimmed);
    if (whole && Number.isSafeInteger(n)) return n;
    this.issues.push({
      field: path,
      message: whole ? 'is too large (at most 2^53-1)' : 'must be a whole number',
    });
    return undefined;
  }

  required(value: string, path: string): number | undefined {
    if (value.trim() === '') {
      this.issues.push({ field: path, message: 'is required' });
      return undefined;
    }
    return this.optional(value, path);
  }
}

/** Absent when blank, so an empty optional field is never sent as "". */
function present(value: string): string | undefined {
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function limitInput(limit: LimitForm, index: number, numbers: NumberReader): LimitInput {
  const at = (field: LimitField) => limitPath(index, field);
  const input: LimitInput = {
    name: limit.name.trim(),
    // Checked by the reader; 0 only stands in while an issue keeps the input from being sent.
    limit: numbers.required(limit.limit, at('limit')) ?? 0,
    algorithm: limit.algorithm,
  };
  const window = present(limit.window);
  const unit = present(limit.unit);
  const timezone = present(limit.timezone);
  const burst = numbers.optional(limit.burst, at('burst'));
  const precision = numbers.optional(limit.precision, at('precision'));
  if (window !== undefined) input.window = window;
  if (unit !== undefined) input.unit = unit;
  if (burst !== undefined) input.burst = burst;
  if (precision !== undefined) input.precision = precision;
  if (limit.align !== '') input.align = limit.align;
  if (timezone !== undefined) input.timezone = timezone;
  return input;
}

/** A queue needs both numbers; concurrency needs its max (the TTL has a default). */
function pairIssues(form: QuotaForm): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const blank = (s: string) => s.trim() === '';
  if (blank(form.queueMaxSize) !== blank(form.queueMaxWaitMs)) {
    const missing = blank(form.queueMaxSize) ? quotaPaths.queueMaxSize : quotaPaths.queueMaxWaitMs;
    issues.push({ field: missing, message: 'a queue needs both max size and max wait' });
  }
  if (blank(form.concurrencyMax) && !blank(form.concurrencyLeaseTtlMs)) {
    issues.push({
      field: quotaPaths.concurrencyMax,
      message: 'is required when a lease TTL is given',
    });
  }
  return issues;
}

/**
 * The QuotaInput the form says, or the issues that keep it from being sent (numbers that are not
 * whole numbers, half a queue): nothing is sent partly. Everything else is the admin's to judge.
 */
export function toQuotaInput(form: QuotaForm): InputOrIssues {
  const numbers = new NumberReader();
  const input: QuotaInput = {
    name: form.name.trim(),
    scope: form.scope,
    shadow: form.shadow,
    clientOverrides: form.clientOverrides,
    lease: form.lease,
    limits: form.limits.map((l, i) => limitInput(l, i, numbers)),
  };
  const match = present(form.match);
  if (match !== undefined) input.match = match;
  if (form.onStoreFailure !== '') input.onStoreFailure = form.onStoreFailure;
  const maxSize = numbers.optional(form.queueMaxSize, quotaPaths.queueMaxSize);
  const maxWaitMs = numbers.optional(form.queueMaxWaitMs, quotaPaths.queueMaxWaitMs);
  if (maxSize !== undefined && maxWaitMs !== undefined) input.queue = { maxSize, maxWaitMs };
  const max = numbers.optional(form.concurrencyMax, quotaPaths.concurrencyMax);
  const leaseTtlMs = numbers.optional(form.concurrencyLeaseTtlMs, quotaPaths.concurrencyLeaseTtlMs);
  if (max !== undefined)
    input.concurrency = leaseTtlMs === undefined ? { max } : { max, leaseTtlMs };
  const issues = [...numbers.issues, ...pairIssues(form)];
  return issues.length > 0 ? { ok: false, issues } : { ok: true, input };
}
