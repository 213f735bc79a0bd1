import { ADMIN_HEADERS } from '@app/contracts';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** What a request (or a subscription's connection_init) brought to identify itself. */
export interface RequestAuth {
  /** The token of `Authorization: Bearer <token>`, if any. */
  readonly bearer: string | undefined;
  /** Who is acting, for the audit log: X-Actor, else the credential kind. */
  readonly actor: string;
}

export type OperationKind = 'query' | 'mutation' | 'subscription';

export interface TokenSettings {
  readonly adminToken: string | undefined;
  readonly readToken: string | undefined;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** Free text for the audit log, bounded so a header cannot flood it. */
const ACTOR = /^[\p{L}\p{N} ._@:/+-]{1,64}$/u;

/** Header names are case-insensitive, in HTTP and in a connection_init payload alike. */
function header(headers: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  }
  return undefined;
}

/** Reads Authorization and X-Actor from HTTP headers or a connection_init payload. */
export function requestAuth(
  headers: IncomingHttpHeaders | Readonly<Record<string, unknown>> | undefined,
  settings: TokenSettings,
  ip?: string,
): RequestAuth {
  const h = headers ?? {};
  const bearer = BEARER.exec(header(h, ADMIN_HEADERS.authorization) ?? '')?.[1];
  const named = header(h, ADMIN_HEADERS.actor)?.trim();
  const credential = CREDENTIAL_NAMES[credentialKind(bearer, settings)];
  const who = named !== undefined && ACTOR.test(named) ? named : 'anonymous';
  const from = ip === undefined ? '' : ` from ${ip}`;
  return { bearer, actor: `${who} (${credential}${from})` };
}

/** Which token a request brought: ADMIN_TOKEN, ADMIN_READ_TOKEN, none, or one that is neither. */
export type CredentialKind = 'admin' | 'read' | 'none' | 'unknown';

export function credentialKind(
  bearer: string | undefined,
  settings: TokenSettings,
): CredentialKind {
  if (bearer === undefined) return 'none';
  if (sameSecret(bearer, settings.adminToken)) return 'admin';
  if (sameSecret(bearer, settings.readToken)) return 'read';
  return 'unknown';
}

/** As the audit log names each kind. */
const CREDENTIAL_NAMES: Readonly<Record<CredentialKind, string>> = {
  admin: 'admin token',
  read: 'read token',
  none: 'no token',
  unknown: 'unknown token',
};

/** Constant-time comparison: hashing first makes lengths equal. */
export function sameSecret(given: string | undefined, expected: string | undefined): boolean {
  if (given === undefined || expected === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * docs/contract.md, Admin GraphQL: with ADMIN_TOKEN set every mutation needs it; with
 * ADMIN_READ_TOKEN set queries and subscriptions need it (the admin token, which can do everything,
 * also reads). Undefined when allowed, else why not.
 */
export function refusal(
  kind: OperationKind,
  auth: RequestAuth,
  settings: TokenSettings,
): string | undefined {
  const admin = sameSecret(auth.bearer, settings.adminToken);
  switch (kind) {
    case 'mutation':
      if (settings.adminToken === undefined || admin) return undefined;
      return auth.bearer === undefined
        ? 'mutations need Authorization: Bearer <ADMIN_TOKEN>'
        : 'the bearer token is not ADMIN_TOKEN';
    case 'query':
    case 'subscription':
      if (settings.readToken === undefined || admin) return undefined;
      if (sameSecret(auth.bearer, settings.readToken)) return undefined;
      return auth.bearer === undefined
        ? `${kind === 'query' ? 'queries' : 'subscriptions'} need Authorization: Bearer <ADMIN_READ_TOKEN>`
        : 'the bearer token is neither ADMIN_READ_TOKEN nor ADMIN_TOKEN';
  }
}
