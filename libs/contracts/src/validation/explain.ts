import type { TSchema } from '@sinclair/typebox';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { fieldFromPointer } from './field-path';
import { fieldFailure, type ParseFailure } from './parse-result';

/** Errors that only say "wrong JSON type"; a union branch failing this way was not the one meant. */
const TYPE_MISMATCHES: ReadonlySet<ValueErrorType> = new Set([
  ValueErrorType.Array,
  ValueErrorType.Boolean,
  ValueErrorType.Integer,
  ValueErrorType.Literal,
  ValueErrorType.Null,
  ValueErrorType.Number,
  ValueErrorType.Object,
  ValueErrorType.String,
  ValueErrorType.Union,
]);

function schemaText(schema: TSchema, keyword: 'errorMessage' | 'propertyNameMessage') {
  const text: unknown = schema[keyword];
  return typeof text === 'string' ? text : undefined;
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' && Number.isFinite(value) ? 'number' : typeof value;
}

function expectsJsonType(schema: TSchema, jsonType: string): boolean {
  const type: unknown = schema.type;
  return type === jsonType || (type === 'integer' && jsonType === 'number');
}

/**
 * For a union (cost: integer | object), the error of the branch the value was meant for: the one
 * that failed on a rule (minimum, unit name) rather than on the value's type, else the one that
 * expects the value's JSON type (so 1.5 is told "must be an integer").
 */
function errorOfIntendedBranch(unionError: ValueError): ValueError | undefined {
  const firsts = unionError.errors
    .map((branch) => branch.First())
    .filter((first) => first !== undefined);
  const failedOnRule = firsts.find(
    (first) => first.path !== unionError.path || !TYPE_MISMATCHES.has(first.type),
  );
  if (failedOnRule !== undefined) return failedOnRule;
  const jsonType = jsonTypeOf(unionError.value);
  return firsts.find((first) => expectsJsonType(first.schema, jsonType));
}

function describe(error: ValueError): ParseFailure {
  if (error.type === ValueErrorType.Union) {
    const inner = errorOfIntendedBranch(error);
    if (inner !== undefined) return describe(inner);
  }
  const field = fieldFromPointer(error.path);
  if (error.type === ValueErrorType.ObjectRequiredProperty) {
    const rule = schemaText(error.schema, 'errorMessage');
    return fieldFailure(field, rule === undefined ? 'is required' : `is required and ${rule}`);
  }
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    const rule = schemaText(error.schema, 'propertyNameMessage');
    return fieldFailure(field, rule ?? 'is not an allowed field');
  }
  return fieldFailure(field, schemaText(error.schema, 'errorMessage') ?? error.message);
}

/**
 * Explains why `check` refused `value`. Only called after `check.Check(value)` returned false, so
 * the (slow) error walk and the text are never paid for on valid input.
 */
export function explainSchemaFailure(check: TypeCheck<TSchema>, value: unknown): ParseFailure {
  const first = check.Errors(value).First();
  if (first === undefined) return fieldFailure('body', 'is invalid');
  return describe(first);
}
