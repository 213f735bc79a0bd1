import { BlockList } from 'node:net';

/**
 * Where the admin listens (docs/operations.md, "Binding"). Mutations are open exactly when no
 * admin token is set (ADMIN_TOKEN, ADMIN_TOKENS; read tokens guard reads only), so then the admin
 * stays on loopback unless the operator says ADMIN_INSECURE=true.
 */
export interface BindingRequest {
  /** HOST, trimmed; undefined when unset or empty. */
  readonly host: string | undefined;
  /** ADMIN_TOKEN or ADMIN_TOKENS is set. */
  readonly adminTokenSet: boolean;
  /** ADMIN_INSECURE=true. */
  readonly insecure: boolean;
}

export interface AdminBinding {
  readonly host: string;
  /** One log line when mutations are open to whoever reaches `host`. */
  readonly warning: string | undefined;
}

/** Without ADMIN_TOKEN: 127.0.0.1 only. Clients of `localhost` that try ::1 first fall back to it. */
export const OPEN_ADMIN_DEFAULT_HOST = '127.0.0.1';
export const GUARDED_ADMIN_DEFAULT_HOST = '0.0.0.0';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** 127.0.0.0/8, ::1 (and IPv4-mapped loopback), or the name localhost (RFC 6761). */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  // Any other name may resolve anywhere: check answers false for what is not an IP address.
  return LOOPBACK.check(host, host.includes(':') ? 'ipv6' : 'ipv4');
}

/** Decides the address, or throws naming the variables when an open admin would leave loopback. */
export function adminBinding({ host, adminTokenSet, insecure }: BindingRequest): AdminBinding {
  if (adminTokenSet) return { host: host ?? GUARDED_ADMIN_DEFAULT_HOST, warning: undefined };
  const bound = host ?? OPEN_ADMIN_DEFAULT_HOST;
  if (isLoopback(bound)) {
    return {
      host: bound,
      warning:
        `no admin token is set, so mutations need no token: listening on ${bound} only ` +
        '(set ADMIN_TOKEN or ADMIN_TOKENS to serve other addresses)',
    };
  }
  if (!insecure) {
    throw new Error(
      `HOST=${bound} without ADMIN_TOKEN or ADMIN_TOKENS would let anyone who reaches it change ` +
        'every quota: set ADMIN_TOKEN (or ADMIN_TOKENS), or HOST to a loopback address (127.0.0.1, ::1), ' +
        'or ADMIN_INSECURE=true to accept that',
    );
  }
  return {
    host: bound,
    warning:
      `INSECURE: ADMIN_INSECURE=true and no admin token is set: anyone who reaches ${bound} ` +
      'can change every quota',
  };
}
