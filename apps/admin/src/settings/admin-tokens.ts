import { envValue, type Env, type EnvName } from '@app/contracts';
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The admin's bearer tokens, each with a name: the audit log records who made a change by the
 * name of the token that authenticated it. ADMIN_TOKEN is the admin token named `admin` and
 * ADMIN_READ_TOKEN the read token named `read`; ADMIN_TOKENS and ADMIN_READ_TOKENS give more,
 * as `name:token,name:token`.
 */

/** `admin`: everything; `read`: queries, subscriptions and introspection. */
export type TokenRole = 'admin' | 'read';

/** The token a request brought. */
export interface Credential {
  readonly kind: TokenRole | 'none' | 'unknown';
  /** The token's name; undefined without a known token. */
  readonly name: string | undefined;
}

/** The audit log's actor when a request brought no known token (mutations are then open). */
export const ANONYMOUS_ACTOR = 'anonymous';
export const TOKEN_NAME = /^[a-z0-9_-]{1,64}$/;
/** Named tokens shorter than this are refused: `openssl rand -hex 32` gives 64. */
export const MIN_NAMED_TOKEN_LENGTH = 16;
/** Printable ASCII without spaces or commas: what fits `Bearer <token>` and a comma list. */
const TOKEN_TEXT = /^[\x21-\x2b\x2d-\x7e]+$/;

interface NamedToken {
  readonly name: string;
  readonly role: TokenRole;
  readonly variable: EnvName;
  readonly digest: Buffer;
}

/** Equal lengths for timingSafeEqual, whatever the tokens' lengths. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export class AdminTokens {
  /** Mutations need an admin token. */
  readonly guardWrites: boolean;
  /** Queries, subscriptions and introspection need a read or an admin token. */
  readonly guardReads: boolean;

  constructor(private readonly tokens: readonly NamedToken[]) {
    this.guardWrites = tokens.some((token) => token.role === 'admin');
    this.guardReads = tokens.some((token) => token.role === 'read');
  }

  /**
   * Which token `bearer` is. Every token is compared, in constant time, whichever matches: the
   * time taken tells nothing of the tokens.
   */
  identify(bearer: string | undefined): Credential {
    if (bearer === undefined) return { kind: 'none', name: undefined };
    const given = digest(bearer);
    let found: NamedToken | undefined;
    for (const token of this.tokens) {
      if (timingSafeEqual(given, token.digest)) found ??= token;
    }
    return found === undefined
      ? { kind: 'unknown', name: undefined }
      : { kind: found.role, name: found.name };
  }
}

function namedTokens(env: Env, variable: EnvName, role: TokenRole): NamedToken[] {
  const list = envValue(env, variable);
  if (list === undefined) return [];
  return list.split(',').map((entry, index) => {
    const at = `${variable}: entry ${index + 1}`;
    const colon = entry.indexOf(':');
    if (colon < 0) throw new Error(`${at} must be name:token`);
    const name = entry.slice(0, colon).trim();
    const token = entry.slice(colon + 1).trim();
    if (!TOKEN_NAME.test(name)) {
      // Not quoted: a reversed entry (token:name) would print the token.
      throw new Error(
        `${at}: the name (before the first ':') must be 1..64 characters of [a-z0-9_-]`,
      );
    }
    if (name === ANONYMOUS_ACTOR) {
      throw new Error(
        `${at}: "${ANONYMOUS_ACTOR}" names requests without a token; choose another name`,
      );
    }
    if (!TOKEN_TEXT.test(token)) {
      throw new Error(
        `${at}: the token of "${name}" must be printable ASCII without spaces or commas`,
      );
    }
    if (token.length < MIN_NAMED_TOKEN_LENGTH) {
      throw new Error(
        `${at}: the token of "${name}" is ${token.length} characters; give at least ` +
          `${MIN_NAMED_TOKEN_LENGTH} (e.g. openssl rand -hex 32)`,
      );
    }
    return { name, role, variable, digest: digest(token) };
  });
}

function singleToken(env: Env, variable: EnvName, name: string, role: TokenRole): NamedToken[] {
  const token = envValue(env, variable);
  return token === undefined ? [] : [{ name, role, variable, digest: digest(token) }];
}

/** Two tokens with one name would make the audit log ambiguous; one token with two names too. */
function refuseRepeats(tokens: readonly NamedToken[]): void {
  tokens.forEach((token, index) => {
    const earlier = tokens.slice(0, index);
    const sameName = earlier.find((other) => other.name === token.name);
    if (sameName !== undefined) {
      throw new Error(
        `${token.variable}: the name "${token.name}" is given twice (also in ${sameName.variable}); ` +
          'give each token its own name',
      );
    }
    const sameToken = earlier.find((other) => other.digest.equals(token.digest));
    if (sameToken !== undefined) {
      throw new Error(
        `${token.variable}: the token of "${token.name}" is also the token of "${sameToken.name}" ` +
          `(${sameToken.variable}); give each name its own token`,
      );
    }
  });
}

/** Reads and checks the four variables; an error names the variable and the entry. */
export function readAdminTokens(env: Env): AdminTokens {
  const tokens = [
    ...singleToken(env, 'ADMIN_TOKEN', 'admin', 'admin'),
    ...namedTokens(env, 'ADMIN_TOKENS', 'admin'),
    ...singleToken(env, 'ADMIN_READ_TOKEN', 'read', 'read'),
    ...namedTokens(env, 'ADMIN_READ_TOKENS', 'read'),
  ];
  refuseRepeats(tokens);
  return new AdminTokens(tokens);
}
