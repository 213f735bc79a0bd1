/** JSON in and out of NATS payloads. */

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
