import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { fromPublic, fromSeed } from 'nkeys.js';

/**
 * The control plane's keys are NATS nkeys (ed25519), written as nkeys writes them: a seed
 * `S…` (58 characters) signs, a public key (`U…`, `A…`, … 56 characters) verifies. nkeys.js
 * checks their text (prefix, CRC); the signing itself runs on node:crypto's native ed25519,
 * about a hundred times faster than nkeys.js's JavaScript (docs/benchmarks.md).
 */

/** A key that verifies: its nkeys text and the native key. */
export interface VerifyKey {
  readonly publicKey: string;
  readonly key: KeyObject;
}

/** A key that signs, with its public half. */
export interface SigningKey extends VerifyKey {
  readonly privateKey: KeyObject;
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** DER prefixes of an ed25519 PKCS#8 private key and SPKI public key around the 32 raw bytes. */
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

/** RFC 4648 base32 without padding, as nkeys writes it; nkeys.js has checked the text already. */
function base32Bytes(text: string): Buffer {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text) {
    value = (value << 5) | BASE32.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >>> bits) & 0xff);
    }
  }
  return Buffer.from(out);
}

/** The native public key of 32 raw bytes. */
function publicKeyObject(raw: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, raw]), format: 'der', type: 'spki' });
}

/** A seed's text → its key pair; throws an Error saying what is wrong (never the seed itself). */
export function signingKeyOf(seed: string): SigningKey {
  if (!seed.startsWith('S')) throw new Error('must be an nkeys seed (S…, 58 characters)');
  let publicKey: string;
  try {
    publicKey = fromSeed(new TextEncoder().encode(seed)).getPublicKey();
  } catch (error) {
    throw new Error(`is not a valid nkeys seed (${(error as Error).message})`);
  }
  // Seed bytes: 2 of prefix, the 32-byte ed25519 seed, 2 of CRC.
  const raw = base32Bytes(seed).subarray(2, 34);
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519, raw]),
    format: 'der',
    type: 'pkcs8',
  });
  const key = createPublicKey(privateKey);
  // The native key and nkeys.js must agree on the public key the seed gives.
  if (!rawPublicKey(key).equals(base32Bytes(publicKey).subarray(1, 33))) {
    throw new Error('is not a valid nkeys seed (its public key does not derive)');
  }
  return { publicKey, key, privateKey };
}

/** A public key's text → the key; throws an Error saying what is wrong. */
export function verifyKeyOf(publicKey: string): VerifyKey {
  if (publicKey.startsWith('S')) {
    throw new Error('is a seed, a secret: give its public key (U…) instead');
  }
  try {
    fromPublic(publicKey);
  } catch (error) {
    throw new Error(`is not a valid nkeys public key (${(error as Error).message})`);
  }
  return { publicKey, key: publicKeyObject(base32Bytes(publicKey).subarray(1, 33)) };
}

function rawPublicKey(key: KeyObject): Buffer {
  return key.export({ format: 'der', type: 'spki' }).subarray(SPKI_ED25519.length);
}

/** `read(text)`, its Error prefixed by `what` (the variable, never a seed's text). */
function named<T>(what: string, read: (text: string) => T, text: string): T {
  try {
    return read(text);
  } catch (error) {
    throw new Error(`${what} ${(error as Error).message}`);
  }
}

/** A value for an error message; a seed pasted by mistake is a secret and is never quoted. */
function shown(text: string): string {
  return text.startsWith('S') ? 'a seed' : `"${text}"`;
}

/** A seed variable (CONTROL_SEED, REPORT_SEED): undefined when unset; the error names it. */
export function readSeed(name: string, raw: string | undefined): SigningKey | undefined {
  const text = raw?.trim();
  return text ? named(name, signingKeyOf, text) : undefined;
}

/** A public key variable (CONTROL_PUBLIC_KEY): undefined when unset. */
export function readPublicKey(name: string, raw: string | undefined): VerifyKey | undefined {
  const text = raw?.trim();
  return text ? named(`${name}: ${shown(text)}`, verifyKeyOf, text) : undefined;
}

/** A comma list of public keys (REPORT_PUBLIC_KEYS): empty when unset; a bad item is named. */
export function readPublicKeys(name: string, raw: string | undefined): VerifyKey[] {
  const items = (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return items.map((item, index) =>
    named(`${name}: item ${index + 1} (${shown(item)})`, verifyKeyOf, item),
  );
}

/**
 * The warning a process logs once at start when a part of its control plane is not signed:
 * undefined when every part is (`gaps` empty).
 */
export function unauthenticatedControl(gaps: readonly string[]): string | undefined {
  if (gaps.length === 0) return undefined;
  return `control is unauthenticated: ${gaps.join('; ')} (docs/operations.md, "Control keys")`;
}
