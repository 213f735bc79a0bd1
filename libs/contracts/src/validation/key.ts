import { CONTROL_CHARACTER } from '../messages/control-characters';
import { MAX_KEY_BYTES } from '../messages/limits';
import { fieldFailure, type ParseResult } from './parse-result';

/** Printable ASCII is already NFC and one byte per character: the common case, one regex test. */
const PLAIN_ASCII_KEY = new RegExp(`^[\\x20-\\x7e]{1,${MAX_KEY_BYTES}}$`);
/** In `u` mode a valid surrogate pair is one code point, so only lone halves match. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;
/**
 * Canonical composition folds at most 4 code points (8 UTF-16 units) into one, so a string twice
 * that long per allowed byte can never fit once normalised; refusing it early keeps normalize()
 * off megabyte inputs.
 */
const MAX_KEY_UTF16_UNITS = MAX_KEY_BYTES * 16;

/** A key of whitespace alone is almost always a client's empty field padded; it names nothing. */
const BLANK = /^\s+$/u;

const SIZE_RULE = `must be 1..${MAX_KEY_BYTES} bytes of UTF-8`;
const BLANK_RULE = 'must not be whitespace only';
const SPACE = 0x20;

/** Checks a key that is already known to be a string and returns it normalised to NFC. */
export function normaliseKey(raw: string, field = 'key'): ParseResult<string> {
  if (PLAIN_ASCII_KEY.test(raw))
    return raw.charCodeAt(0) === SPACE ? refuseBlank(raw, field) : { ok: true, value: raw };
  if (raw.length === 0 || raw.length > MAX_KEY_UTF16_UNITS) return fieldFailure(field, SIZE_RULE);
  if (CONTROL_CHARACTER.test(raw)) {
    return fieldFailure(field, 'must not contain control characters (C0, DEL, C1)');
  }
  if (LONE_SURROGATE.test(raw)) {
    return fieldFailure(field, 'must be valid UTF-8 (it has an unpaired surrogate)');
  }
  if (BLANK.test(raw)) return fieldFailure(field, BLANK_RULE);
  const normalised = raw.normalize('NFC');
  const bytes = Buffer.byteLength(normalised, 'utf8');
  if (bytes > MAX_KEY_BYTES) return fieldFailure(field, SIZE_RULE);
  return { ok: true, value: normalised };
}

/** Only a key that starts with a space can be blank, so most keys skip the scan. */
function refuseBlank(raw: string, field: string): ParseResult<string> {
  return BLANK.test(raw) ? fieldFailure(field, BLANK_RULE) : { ok: true, value: raw };
}

/** For keys that arrive outside a JSON body, e.g. the `:key` of `/rate/:key`. */
export function parseKey(raw: unknown, field = 'key'): ParseResult<string> {
  if (typeof raw !== 'string') return fieldFailure(field, `must be a string; ${SIZE_RULE}`);
  return normaliseKey(raw, field);
}
