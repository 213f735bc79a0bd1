import { parseJsonBody, type ErrorReply } from '@app/contracts';

/** Replies go out as UTF-8 JSON; Buffer is a Uint8Array, and its UTF-8 writer is Node's fastest. */
export function encodeJson(reply: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(reply));
}

/**
 * The payload as a Buffer view over the same bytes (no copy): the contracts' JSON reader decodes a
 * Buffer with Node's native UTF-8 decoder, which beats TextDecoder on the small payloads NATS carries.
 */
export function asBuffer(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * The refused message as far as it is JSON, so that an INVALID_REQUEST reply can echo its key,
 * quota and requestId. Only called on the (cold) failure path, through the same guards as the
 * first reading: a body refused for its shape or its bytes is not parsed again.
 */
export function rawJson(data: Uint8Array): unknown {
  const json = parseJsonBody(asBuffer(data));
  return json.ok ? json.value : undefined;
}

/** Answered when a handler fails unexpectedly: the requester still gets its one reply. */
export const INTERNAL_ERROR_REPLY: Uint8Array = encodeJson({
  ok: false,
  allowed: false,
  code: 'UNAVAILABLE',
  reason: 'internal error; the request may not have been served',
} satisfies ErrorReply);
