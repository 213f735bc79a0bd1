import { parseJsonBody } from '@app/contracts';

/**
 * NestJS's NATS client (ClientProxy, Transport.NATS) wraps a payload as `{ pattern, data, id }`
 * (`id` only on `send`; `emit` has none) and reads the reply `{ id, response, isDisposed }`.
 * The contract's own requests are plain JSON; both reach the same subjects.
 */
export interface NestEnvelope {
  /** The payload the caller passed to `send` / `emit` (absent when it passed none). */
  readonly data: unknown;
  /** Present for `send` (a reply is awaited), absent for `emit` (an event). */
  readonly id: string | undefined;
}

// Nest's serializer writes JSON.stringify({ pattern, data, id }): the bytes open with this.
const ENVELOPE_OPENING = Buffer.from('{"pattern":');
const P = ENVELOPE_OPENING[2]!;
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(['pattern', 'data', 'id']);

/**
 * Cheap test on the hot path: only payloads opening exactly as Nest writes an envelope are looked
 * at further. A plain request opens `{"key"`, `{"requests"`...: one byte compare rules it out.
 */
export function opensLikeEnvelope(data: Uint8Array): boolean {
  if (data.length <= ENVELOPE_OPENING.length || data[2] !== P) return false;
  for (let i = 0; i < ENVELOPE_OPENING.length; i++) {
    if (data[i] !== ENVELOPE_OPENING[i]) return false;
  }
  return true;
}

/**
 * The envelope, or undefined when `data` is not exactly one: a JSON object with no keys but
 * `pattern`, `data` and `id`, whose `pattern` is the subject it came on (Nest sends a pattern as
 * the subject) and whose `id`, if any, is a string. A plain request carrying a `pattern` field
 * beside its own fields is not one, and is refused as plain JSON (unknown field).
 */
export function readEnvelope(data: Uint8Array, subject: string): NestEnvelope | undefined {
  if (!opensLikeEnvelope(data)) return undefined;
  // The envelope's own object is not the payload's: the payload alone is held to the JSON guards,
  // as it is in plain JSON (its bytes are checked again by the operation's parser).
  const json = parseJsonBody(data, true);
  if (!json.ok || typeof json.value !== 'object' || json.value === null) return undefined;
  const value = json.value as Record<string, unknown>;
  for (const key of Object.keys(value)) if (!ENVELOPE_KEYS.has(key)) return undefined;
  if (value.pattern !== subject) return undefined;
  if (value.id !== undefined && typeof value.id !== 'string') return undefined;
  return { data: value.data, id: value.id };
}

/** The envelope's payload as the contract's plain JSON bytes, for the operation's own parser. */
export function payloadBytes(envelope: NestEnvelope): Uint8Array {
  // `send(pattern)` with no payload: an empty body, refused naming `body` like any empty request.
  return Buffer.from(envelope.data === undefined ? '' : JSON.stringify(envelope.data));
}

/** Nest's reply to a `send`: the operation's reply bytes spliced in whole, never parsed again. */
export function envelopeReply(id: string, reply: Uint8Array): Uint8Array {
  return Buffer.concat([
    Buffer.from(`{"id":${JSON.stringify(id)},"isDisposed":true,"response":`),
    reply,
    CLOSING_BRACE,
  ]);
}

/** Nest's error reply (the observable errors): for a failure of the Nest pipeline itself. */
export function envelopeError(id: string, err: unknown): Uint8Array {
  return Buffer.from(JSON.stringify({ id, err: errorPayload(err), isDisposed: true }));
}

const CLOSING_BRACE = Buffer.from('}');

function errorPayload(err: unknown): unknown {
  if (err instanceof Error) return { status: 'error', message: err.message };
  return err ?? { status: 'error', message: 'unknown error' };
}
