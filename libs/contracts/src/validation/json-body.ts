import { isUtf8 } from 'node:buffer';
import { invalidUtf8Failure } from './invalid-utf8';
import { jsonShapeProblem } from './json-shape';
import { BODY_FIELD, fieldFailure, type ParseResult } from './parse-result';

const utf8 = new TextDecoder('utf-8');
const BYTE_ORDER_MARK = 0xfeff;

/** Valid UTF-8 only: Buffer's native decoder where it can, TextDecoder for other byte arrays. */
function decode(bytes: Uint8Array): string {
  return Buffer.isBuffer(bytes) ? bytes.toString('utf8') : utf8.decode(bytes);
}

/**
 * Parses a JSON body (HTTP or NATS). A body nested too deeply or holding too many objects is
 * refused before JSON.parse sees it (json-shape.ts). A body that is not valid UTF-8 is refused
 * naming the field that holds the bad bytes (isUtf8 is native; only refused bodies pay for finding
 * the field). Any other failure is reported against the field `body`. `wrapped`: the body is a
 * transport's envelope around the payload, whose own level is not counted (jsonShapeProblem).
 */
export function parseJsonBody(body: string | Uint8Array, wrapped = false): ParseResult<unknown> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const shape = jsonShapeProblem(bytes, wrapped);
  if (shape !== undefined) return fieldFailure(BODY_FIELD, shape);
  if (typeof body === 'string') return parseJsonText(body);
  if (!isUtf8(body)) return invalidUtf8Failure(body, parseJsonText);
  return parseJsonText(decode(body));
}

/** JSON.parse of a text whose shape was checked. */
function parseJsonText(body: string): ParseResult<unknown> {
  const text = body.charCodeAt(0) === BYTE_ORDER_MARK ? body.slice(1) : body;
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    // Only now look at why: valid bodies never pay for the trim or the message.
    if (text.trim() === '') return fieldFailure(BODY_FIELD, 'is empty; expected a JSON object');
    const detail = error instanceof Error ? error.message : String(error);
    return fieldFailure(BODY_FIELD, `is not valid JSON (${detail})`);
  }
}

/** Lifts a validator of parsed values to one of raw JSON bodies (Buffer or string). */
export function fromJsonBody<T>(
  parse: (input: unknown) => ParseResult<T>,
): (body: string | Uint8Array) => ParseResult<T> {
  return (body) => {
    const json = parseJsonBody(body);
    return json.ok ? parse(json.value) : json;
  };
}
