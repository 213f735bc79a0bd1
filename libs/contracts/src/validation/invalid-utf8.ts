import { BODY_FIELD, fieldFailure, type ParseFailure, type ParseResult } from './parse-result';
import { fieldFromPointer } from './field-path';

/** A byte that is not part of valid UTF-8 decodes to the lone low surrogate U+DC00 + byte. */
const INVALID_BYTE_BASE = 0xdc00;
/** In `u` mode a valid surrogate pair is one code point, so only lone halves match. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;

interface MarkedText {
  readonly text: string;
  /** Offset of the first invalid byte. */
  readonly firstInvalid: number;
}

/**
 * Decodes UTF-8 with each invalid byte as a lone surrogate (as Python's `surrogateescape` does),
 * rather than U+FFFD: two different invalid keys then stay different, and a string that holds
 * one can be found after parsing. Only bodies that failed `isUtf8` come here.
 */
function decodeMarkingInvalid(bytes: Uint8Array): MarkedText {
  const units = new Uint16Array(bytes.length);
  let n = 0;
  let firstInvalid = -1;
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i]!;
    const length = sequenceLength(lead);
    const point = length === 1 ? lead : codePoint(bytes, i, length);
    if (point === undefined) {
      if (firstInvalid === -1) firstInvalid = i;
      units[n++] = INVALID_BYTE_BASE | lead;
      i++;
      continue;
    }
    if (point >= 0x10000) {
      units[n++] = 0xd800 | ((point - 0x10000) >> 10);
      units[n++] = 0xdc00 | ((point - 0x10000) & 0x3ff);
    } else {
      units[n++] = point;
    }
    i += length;
  }
  return { text: fromUnits(units.subarray(0, n)), firstInvalid };
}

/** Bytes in the sequence a lead byte starts (1 for ASCII), 0 for a byte that cannot lead one. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * The code point of the sequence at `at`, or undefined when it is not well-formed UTF-8 (RFC 3629:
 * no overlong forms, no encoded surrogates, nothing above U+10FFFF).
 */
function codePoint(bytes: Uint8Array, at: number, length: number): number | undefined {
  if (length === 0 || at + length > bytes.length) return undefined;
  const lead = bytes[at]!;
  const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
  const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
  let point = lead & (0xff >> (length + 1));
  for (let k = 1; k < length; k++) {
    const next = bytes[at + k]!;
    if (next < (k === 1 ? low : 0x80) || next > (k === 1 ? high : 0xbf)) return undefined;
    point = (point << 6) | (next & 0x3f);
  }
  return point;
}

/** fromCharCode takes its units as arguments: at most this many at a time. */
const CHUNK = 8192;

function fromUnits(units: Uint16Array): string {
  let text = '';
  for (let at = 0; at < units.length; at += CHUNK) {
    text += String.fromCharCode(...units.subarray(at, at + CHUNK));
  }
  return text;
}

/** The JSON pointer of the first member name or string value with a lone surrogate. */
function pointerToLoneSurrogate(value: unknown, pointer: string): string | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? pointer : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = pointerToLoneSurrogate(value[i], `${pointer}/${i}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [name, member] of Object.entries(value)) {
    const at = `${pointer}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (LONE_SURROGATE.test(name)) return at;
    const found = pointerToLoneSurrogate(member, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Why a body that is not valid UTF-8 is refused, naming the field whose text holds the invalid
 * bytes (`key`, `requests[3].key`, a member name), or `body` when they sit outside any string.
 * `parse` is the caller's JSON reader (the shape is checked already); the body is refused anyway,
 * so this path may be slow. (With U+FFFD, `q-\xff\xfe` and `q-\xfe\xff` would be one key.)
 */
export function invalidUtf8Failure(
  bytes: Uint8Array,
  parse: (text: string) => ParseResult<unknown>,
): ParseFailure {
  const { text, firstInvalid } = decodeMarkingInvalid(bytes);
  const rule = `must be valid UTF-8 (invalid byte 0x${bytes[firstInvalid]!.toString(16)} at offset ${firstInvalid})`;
  const json = parse(text);
  if (!json.ok) return fieldFailure(BODY_FIELD, rule);
  const pointer = pointerToLoneSurrogate(json.value, '');
  return fieldFailure(pointer === undefined ? BODY_FIELD : fieldFromPointer(pointer), rule);
}
