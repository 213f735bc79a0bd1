import { readEnvFile } from '@app/contracts';
import { fromSeed } from 'nkeys.js';

/** The two armoured blocks of a .creds file: the user JWT, then the user's nkey seed. */
const CREDS_BLOCK = /-{3,}[^\n]*-{3,}\r?\n\s*([^\s-][^\n]*?)\s*\r?\n\s*-{3,}[^\n]*-{3,}/g;

/**
 * NATS_CREDS, checked at start: a .creds file as `nsc` writes it, a user JWT and the seed of that
 * same user. The server verifies the JWT's signatures; this only catches a wrong or damaged
 * file before any connection. No message quotes the file.
 */
export function checkCredsFile(path: string): void {
  const text = readEnvFile('NATS_CREDS', path).toString('utf8');
  const [jwt, seed] = [...text.matchAll(CREDS_BLOCK)].map((m) => m[1] ?? '');
  const bad = (what: string): Error => new Error(`NATS_CREDS: ${path} ${what}`);
  if (jwt === undefined || seed === undefined) {
    throw bad('is not a NATS credentials file (a user JWT and a seed, each between ----- lines)');
  }
  const subject = jwtSubject(jwt);
  if (subject === undefined) throw bad('holds no valid user JWT');
  let publicKey: string;
  try {
    publicKey = fromSeed(new TextEncoder().encode(seed)).getPublicKey();
  } catch {
    throw bad('holds no valid nkey seed');
  }
  if (publicKey !== subject) throw bad("holds a seed that is not the JWT's user");
}

/** The `sub` claim of a JWT, unverified. */
function jwtSubject(jwt: string): string | undefined {
  const parts = jwt.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8')) as unknown;
    const sub = (claims as { sub?: unknown } | null)?.sub;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}
