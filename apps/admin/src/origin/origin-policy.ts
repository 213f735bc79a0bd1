import type { Env } from '@app/contracts';
import { isLoopback } from '../settings/admin-binding';

/**
 * Which pages may call the admin (docs/operations.md, "Binding"). A browser sends whatever page it
 * shows to an address that answers, so: an admin on loopback answers only requests whose Host
 * names loopback (a DNS-rebound name such as attacker.example is refused), and wherever it
 * listens, a request carrying an Origin (every browser POST, every WebSocket) must come from the
 * admin's own page. ADMIN_ALLOWED_ORIGINS adds origins, for a proxy that serves the admin under
 * another name. Clients that are not browsers (curl, the SDK, scripts) send no Origin.
 */
export interface OriginPolicy {
  /** The admin listens on a loopback address: the Host header must name loopback. */
  readonly loopback: boolean;
  /** ADMIN_ALLOWED_ORIGINS, each as `URL.origin` writes it (`https://admin.example.com`). */
  readonly allowed: readonly string[];
}

/** The part of a request the policy looks at. */
export interface RequestOrigin {
  readonly host: string | undefined;
  readonly origin: string | undefined;
  /** The port the connection came in on. */
  readonly port: number;
}

/** Header values are quoted in refusals: bounded and printable. */
function quoted(value: string): string {
  const shown = value.length > 100 ? `${value.slice(0, 100)}…` : value;
  return JSON.stringify(shown.replace(/[^\x20-\x7e]/g, '?'));
}

/** `[::1]:8081` → `::1` and 8081; `localhost` → `localhost` and 80 (HTTP's default port). */
function splitHost(host: string): { name: string; port: number } | undefined {
  const parts = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::([0-9]{1,5}))?$/i.exec(host);
  if (parts === null) return undefined;
  return { name: (parts[1] ?? parts[2] ?? '').toLowerCase(), port: Number(parts[3] ?? '80') };
}

function hostRefusal(policy: OriginPolicy, request: RequestOrigin): string | undefined {
  const allowedHosts = policy.allowed.map((origin) => new URL(origin).host);
  const host = request.host?.toLowerCase();
  if (host !== undefined && allowedHosts.includes(host)) return undefined;
  const parts = host === undefined ? undefined : splitHost(host);
  if (parts !== undefined && isLoopback(parts.name) && parts.port === request.port) {
    return undefined;
  }
  const given =
    request.host === undefined ? 'A request without Host' : `Host ${quoted(request.host)}`;
  return (
    `${given} is refused: this admin listens on loopback and answers to localhost, 127.0.0.1 ` +
    `or [::1] on port ${request.port} only (a page of another site may have been pointed at it ` +
    'by DNS); ADMIN_ALLOWED_ORIGINS adds names'
  );
}

function originRefusal(policy: OriginPolicy, request: RequestOrigin): string | undefined {
  const { origin, host } = request;
  if (origin === undefined || policy.allowed.includes(origin)) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const web = url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:');
  if (web && url?.origin === origin && url.host === host?.toLowerCase()) return undefined;
  return (
    `Origin ${quoted(origin)} is refused: only the admin's own pages (the console, GraphiQL) ` +
    'may call it from a browser; ADMIN_ALLOWED_ORIGINS adds origins'
  );
}

/** Why the request is refused (answered 403), or undefined when it may go on. */
export function requestRefusal(policy: OriginPolicy, request: RequestOrigin): string | undefined {
  return (
    (policy.loopback ? hostRefusal(policy, request) : undefined) ?? originRefusal(policy, request)
  );
}

/** Reads ADMIN_ALLOWED_ORIGINS (a comma list of http(s) origins) for an admin bound to `host`. */
export function readOriginPolicy(env: Env, host: string): OriginPolicy {
  const list = env['ADMIN_ALLOWED_ORIGINS']?.trim() ?? '';
  const allowed = list === '' ? [] : list.split(',').map((entry) => readOrigin(entry.trim()));
  return { loopback: isLoopback(host), allowed };
}

function readOrigin(entry: string): string {
  let url: URL | undefined;
  try {
    url = new URL(entry);
  } catch {
    url = undefined;
  }
  const web = url?.protocol === 'http:' || url?.protocol === 'https:';
  const bare =
    url?.pathname === '/' && `${url.search}${url.hash}${url.username}${url.password}` === '';
  if (url === undefined || !web || !bare) {
    throw new Error(
      `ADMIN_ALLOWED_ORIGINS: ${quoted(entry)} must be an origin such as ` +
        'https://admin.example.com or http://localhost:8081 (scheme, host and port only)',
    );
  }
  // As browsers send it: lowercase, without a default port.
  return url.origin;
}
