import { randomBytes, sign as edSign, verify as edVerify } from 'node:crypto';
import { CONTROL_HEADERS } from '../control-names';
import type { SigningKey, VerifyKey } from './control-keys';

/**
 * The signature of a control entry, request or report (docs/contract.md, "Signed control"): one
 * line of text, `RLS1 <signer> <seq> <nonce> <signature>`. A KV entry's value is that line, a
 * newline, then the payload; a NATS message carries it in the `Ratelimit-Signature` header.
 *
 * The ed25519 signature covers the place the payload was sent to (the bucket and key, and
 * whether it is a put or a delete; or the subject and the headers that go with the body), the
 * sequence, the nonce and the payload's bytes, so a signed payload cannot be moved to another
 * key, replayed as a delete, or sent on another subject.
 */

export const SIGNATURE_TAG = 'RLS1';
/** The NATS header that carries the signature line of a request or a report. */
export const SIGNATURE_HEADER = CONTROL_HEADERS.signature;

/**
 * Why a signed value or message was refused; `ratelimit_control_refused_total`'s `cause`.
 * `too-large`: a report larger than its reader takes, refused unread.
 */
export type Refusal =
  'unsigned' | 'unknown-key' | 'bad-signature' | 'replayed' | 'stale' | 'too-large';

/** Where a payload went: a put or delete of a key in a bucket, or a NATS subject. */
export type SignedPlace =
  | { readonly kind: 'put' | 'del'; readonly bucket: string; readonly key: string }
  | { readonly kind: 'msg'; readonly subject: string; readonly headers?: readonly string[] };

export interface SignatureLine {
  /** The nkeys public key of the signer. */
  readonly signer: string;
  /** KV entries: the admin's sequence; messages: the sender's clock, epoch ms. */
  readonly seq: number;
  readonly nonce: string;
  readonly signature: Buffer;
}

export type Opened =
  | { readonly ok: true; readonly payload: string; readonly line?: SignatureLine }
  | { readonly ok: false; readonly refusal: Refusal; readonly reason: string };

/** The line is short; a value whose first line is longer is not signed as this format says. */
export const MAX_LINE_LENGTH = 200;
const LINE = /^RLS1 ([A-Z2-7]{56}) ([1-9][0-9]{0,15}) ([A-Za-z0-9_-]{16}) ([A-Za-z0-9_-]{86})$/;

function placeText(place: SignedPlace): string {
  if (place.kind === 'msg') return ['msg', place.subject, ...(place.headers ?? [])].join('\n');
  return `kv-${place.kind} ${place.bucket} ${place.key}`;
}

function signedBytes(
  signer: string,
  place: SignedPlace,
  seq: number,
  nonce: string,
  payload: string | Uint8Array,
): Buffer {
  const head = `${SIGNATURE_TAG}\n${signer}\n${placeText(place)}\n${seq}\n${nonce}\n`;
  return Buffer.concat([Buffer.from(head), Buffer.from(payload)]);
}

/** Signs `payload` sent to `place` with sequence `seq`: the signature line. */
export function signatureLine(
  key: SigningKey,
  place: SignedPlace,
  seq: number,
  payload: string | Uint8Array,
  nonce: string = randomBytes(12).toString('base64url'),
): string {
  if (!Number.isSafeInteger(seq) || seq < 1) throw new Error(`seq: ${seq} is not an integer >= 1`);
  const data = signedBytes(key.publicKey, place, seq, nonce, payload);
  const signature = edSign(null, data, key.privateKey).toString('base64url');
  return `${SIGNATURE_TAG} ${key.publicKey} ${seq} ${nonce} ${signature}`;
}

/** Reads a signature line; a string says what is wrong with it. */
export function parseSignatureLine(line: string): SignatureLine | string {
  const match = LINE.exec(line);
  if (match === null) {
    return `must be "${SIGNATURE_TAG} <signer> <seq> <nonce> <signature>", got "${line.slice(0, 40)}…"`;
  }
  const seq = Number(match[2]);
  if (!Number.isSafeInteger(seq)) return `seq: ${match[2]} is not a safe integer`;
  return {
    signer: match[1]!,
    seq,
    nonce: match[3]!,
    signature: Buffer.from(match[4]!, 'base64url'),
  };
}

/**
 * Checks `line` over `payload` sent to `place`, signed by a key `trusted` knows. `payload` must
 * be the bytes as sent: a string is taken as their UTF-8 (bytes that are not UTF-8 then fail,
 * as they should).
 */
export function verifyLine(
  line: string | undefined,
  place: SignedPlace,
  payload: string | Uint8Array,
  trusted: (signer: string) => VerifyKey | undefined,
): { ok: true; line: SignatureLine } | { ok: false; refusal: Refusal; reason: string } {
  if (line === undefined) return { ok: false, refusal: 'unsigned', reason: 'not signed' };
  const parsed = parseSignatureLine(line);
  if (typeof parsed === 'string') {
    return { ok: false, refusal: 'bad-signature', reason: `signature: ${parsed}` };
  }
  const key = trusted(parsed.signer);
  if (key === undefined) {
    return { ok: false, refusal: 'unknown-key', reason: `signed by ${parsed.signer}, not trusted` };
  }
  const data = signedBytes(parsed.signer, place, parsed.seq, parsed.nonce, payload);
  if (!edVerify(null, data, key.key, parsed.signature)) {
    return {
      ok: false,
      refusal: 'bad-signature',
      reason: `signature of ${parsed.signer} does not match the payload or its place`,
    };
  }
  return { ok: true, line: parsed };
}

/** A KV value: the signature line, a newline, the payload. */
export function signValue(
  key: SigningKey,
  place: SignedPlace,
  seq: number,
  payload: string,
): string {
  return `${signatureLine(key, place, seq, payload)}\n${payload}`;
}

/** A KV value split into its signature line (absent: unsigned) and its payload. */
export function splitValue(raw: string): { readonly line?: string; readonly payload: string } {
  if (!raw.startsWith(`${SIGNATURE_TAG} `)) return { payload: raw };
  const end = raw.indexOf('\n');
  if (end < 0 || end > MAX_LINE_LENGTH) return { line: raw.slice(0, MAX_LINE_LENGTH), payload: '' };
  return { line: raw.slice(0, end), payload: raw.slice(end + 1) };
}

/** One key trusted, or several (REPORT_PUBLIC_KEYS): the lookup verifyLine takes. */
export function trustedKeys(keys: readonly VerifyKey[]): (signer: string) => VerifyKey | undefined {
  const byText = new Map(keys.map((key) => [key.publicKey, key]));
  return (signer) => byText.get(signer);
}
