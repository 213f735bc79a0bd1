import { Type } from '@sinclair/typebox';
import {
  MAX_COST_UNITS,
  MAX_KEY_BYTES,
  QUOTA_NAME_PATTERN,
  REQUEST_ID_PATTERN,
  UNIT_NAME_PATTERN,
} from './limits';

/**
 * Field schemas shared by the messages. `errorMessage` (the ajv-errors keyword) is the rule a
 * reason quotes when the field fails; validators read it only on the failure path.
 */

/** Byte length, NFC and control characters are checked after the schema (see validation/key.ts). */
export const KeySchema = Type.String({
  description: `UTF-8, normalised to NFC, 1..${MAX_KEY_BYTES} bytes, no control characters`,
  errorMessage: `must be a string of 1..${MAX_KEY_BYTES} bytes of UTF-8`,
});

export const QuotaNameSchema = Type.String({
  pattern: QUOTA_NAME_PATTERN,
  errorMessage: 'must be 1..128 characters of [A-Za-z0-9._:-]',
});

export const RequestIdSchema = Type.String({
  pattern: REQUEST_ID_PATTERN,
  errorMessage: 'must be 1..128 characters of printable ASCII',
});

/** A non-negative safe integer: counts, costs, durations in ms. */
export const CountSchema = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  errorMessage: 'must be an integer >= 0',
});

export const EpochMsSchema = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'epoch milliseconds',
  errorMessage: 'must be an integer >= 1 (epoch milliseconds)',
});

export const UnitNameSchema = Type.String({ pattern: UNIT_NAME_PATTERN });

export const CostByUnitSchema = Type.Record(UnitNameSchema, CountSchema, {
  additionalProperties: false,
  maxProperties: MAX_COST_UNITS,
  errorMessage: `must be an object of at most ${MAX_COST_UNITS} units, each an integer >= 0`,
  propertyNameMessage:
    'is not a unit: units are lowercase words [a-z][a-z0-9_]* of at most 64 characters',
});

/** A number is a cost in `requests`; an object gives a cost per unit. */
export const CostSchema = Type.Union([CountSchema, CostByUnitSchema], {
  errorMessage: 'must be an integer >= 0 or an object of unit -> integer >= 0',
});

export const BooleanSchema = Type.Boolean({ errorMessage: 'must be true or false' });
