/** Size limits of the wire contract, shared by schemas, validators and the config file. */

export const MAX_KEY_BYTES = 256;
export const MAX_QUOTA_NAME_LENGTH = 128;
export const MAX_REQUEST_ID_LENGTH = 128;
export const MAX_UNIT_NAME_LENGTH = 64;
/** Units one cost object may name; bounds the work a single request can cause. */
export const MAX_COST_UNITS = 64;
export const MAX_BATCH_ENTRIES = 1000;

/**
 * The shape of a JSON body (HTTP or NATS), checked before it is parsed. The messages need 4 levels
 * (batch → requests → entry → cost), a batch of MAX_BATCH_ENTRIES entries 2 002 objects and
 * arrays, an object at most 7 fields or MAX_COST_UNITS units: each limit leaves a margin of 2x or
 * more, and bounds what one body costs JSON.parse (see json-shape.ts).
 */
export const MAX_JSON_DEPTH = 16;
export const MAX_JSON_CONTAINERS = 4 * MAX_BATCH_ENTRIES;
export const MAX_JSON_MEMBERS = 2 * MAX_COST_UNITS;

/** `[A-Za-z0-9._:-]`: model names such as `gemini-2.5-pro` or `claude-haiku-3.5` fit. */
export const QUOTA_NAME_PATTERN = `^[A-Za-z0-9._:-]{1,${MAX_QUOTA_NAME_LENGTH}}$`;
/** Printable ASCII, space included (0x20..0x7E). */
export const REQUEST_ID_PATTERN = `^[\\x20-\\x7e]{1,${MAX_REQUEST_ID_LENGTH}}$`;
/**
 * Lowercase words. `constructor` is the one such word that names a property every plain object
 * inherits, so it is refused to keep `cost[unit]` lookups free of prototype surprises (`__proto__`
 * and the other inherited names already fail the pattern).
 */
export const UNIT_NAME_PATTERN = `^(?!constructor$)[a-z][a-z0-9_]{0,${MAX_UNIT_NAME_LENGTH - 1}}$`;

const quotaNameRegExp = new RegExp(QUOTA_NAME_PATTERN);
const requestIdRegExp = new RegExp(REQUEST_ID_PATTERN);
const unitNameRegExp = new RegExp(UNIT_NAME_PATTERN);

export function isQuotaName(value: string): boolean {
  return quotaNameRegExp.test(value);
}

export function isRequestId(value: string): boolean {
  return requestIdRegExp.test(value);
}

export function isUnitName(value: string): boolean {
  return unitNameRegExp.test(value);
}
