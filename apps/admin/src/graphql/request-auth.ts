import { ADMIN_HEADERS } from '@app/contracts';
import type { IncomingHttpHeaders } from 'node:http';
import { ANONYMOUS_ACTOR, type AdminTokens, type Credential } from '../settings/admin-tokens';

/** What a request (or a subscription's connection_init) brought to identify itself. */
export interface RequestAuth {
  readonly credential: Credential;
  /** Who is acting, for the audit log: the token's name, or `anonymous` without a known token. */
  readonly actor: string;
}

export type OperationKind = 'query' | 'mutation' | 'subscription';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

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

/**
 * Reads Authorization from HTTP headers or a connection_init payload. The actor is the name of
 * the token: whatever the request says about itself (an X-Actor header) is not believed.
 */
export function requestAuth(
  headers: IncomingHttpHeaders | Readonly<Record<string, unknown>> | undefined,
  tokens: AdminTokens,
): RequestAuth {
  const bearer = BEARER.exec(header(headers ?? {}, ADMIN_HEADERS.authorization) ?? '')?.[1];
  const credential = tokens.identify(bearer);
  return { credential, actor: credential.name ?? ANONYMOUS_ACTOR };
}

/**
 * docs/contract.md, Admin GraphQL: with an admin token set (ADMIN_TOKEN, ADMIN_TOKENS) every
 * mutation needs one; with a read token set (ADMIN_READ_TOKEN, ADMIN_READ_TOKENS) queries and
 * subscriptions need a read or an admin token (an admin token can do everything). Undefined when
 * allowed, else why not.
 */
export function refusal(
  kind: OperationKind,
  auth: RequestAuth,
  tokens: AdminTokens,
): string | undefined {
  const given = auth.credential.kind;
  switch (kind) {
    case 'mutation':
      if (!tokens.guardWrites || given === 'admin') return undefined;
      if (given === 'none') return 'mutations need Authorization: Bearer <an admin token>';
      return given === 'read'
        ? 'the bearer token is a read token: mutations need an admin token'
        : 'the bearer token is not an admin token';
    case 'query':
    case 'subscription':
      if (!tokens.guardReads || given === 'admin' || given === 'read') return undefined;
      return given === 'none'
        ? `${kind === 'query' ? 'queries' : 'subscriptions'} need Authorization: Bearer <a read or admin token>`
        : 'the bearer token is neither a read nor an admin token';
  }
}
