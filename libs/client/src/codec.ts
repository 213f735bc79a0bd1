/** JSON in and out of NATS payloads. */
import { invalidReply, type Unanswered } from './unanswered';

export function encodeJson(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value));
}

export function encodeText(text: string): Uint8Array {
  return Buffer.from(text);
}

/** A view over the payload's bytes, no copy. */
export function decodeJson(data: Uint8Array): unknown {
  return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
}

/** A reply's JSON, or Unanswered when the bytes are not JSON (nothing a limiter sends). */
export function decodeReply(data: Uint8Array): unknown {
  try {
    return decodeJson(data);
  } catch (error) {
    return notJson(error);
  }
}

/** `context` says where the bytes came from (`HTTP 502: `), if that helps the reader. */
export function notJson(error: unknown, context = ''): Unanswered {
  const why = error instanceof Error ? error.message : String(error);
  return invalidReply(`${context}body: is not JSON (${why})`);
}
