/** NATS_URL: the servers, and the user or token some deployments write into the URLs. */
import { redactUrl } from '@app/contracts';

/** Credentials written in a URL: `user:password@` or `token@`. */
export type UrlCredentials =
  { readonly user: string; readonly pass: string } | { readonly token: string };

export interface NatsServers {
  /** `nats://host:port` or `tls://host:port`, without credentials: safe to log. */
  readonly urls: string[];
  readonly credentials: UrlCredentials | undefined;
  /** Some URL says `tls://`: the connection must be encrypted. */
  readonly tls: boolean;
}

export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

const SCHEMES = new Set(['nats:', 'tls:']);

/** NATS_URL, comma-separated; undefined when it is empty (run without NATS). */
export function parseNatsUrl(raw: string): NatsServers | undefined {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) return undefined;
  const servers = entries.map(parseServer);
  const credentials = sameCredentials(servers.map((s) => s.credentials));
  return {
    urls: servers.map((s) => s.url),
    credentials,
    tls: servers.some((s) => s.url.startsWith('tls:')),
  };
}

function parseServer(entry: string): { url: string; credentials: UrlCredentials | undefined } {
  const refused = (): Error =>
    new Error(
      `NATS_URL: "${redactUrl(entry)}" is not a NATS server URL (nats://host:port or tls://host:port)`,
    );
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `nats://${entry}`);
  } catch {
    throw refused();
  }
  const extra = (url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash;
  if (!SCHEMES.has(url.protocol) || url.hostname === '' || extra) throw refused();
  return { url: `${url.protocol}//${url.host}`, credentials: credentialsOf(url, refused) };
}

function credentialsOf(url: URL, refused: () => Error): UrlCredentials | undefined {
  let user: string;
  let pass: string;
  try {
    user = decodeURIComponent(url.username);
    pass = decodeURIComponent(url.password);
  } catch {
    throw refused();
  }
  if (user === '' && pass === '') return undefined;
  if (user === '') throw new Error('NATS_URL: a password needs a user (nats://user:password@host)');
  // As the other NATS clients read it: `token@host` when there is no password.
  return url.password === '' ? { token: user } : { user, pass };
}

/** One set of credentials for every server: nats.js sends the same to each. */
function sameCredentials(all: readonly (UrlCredentials | undefined)[]): UrlCredentials | undefined {
  const given = all.filter((c): c is UrlCredentials => c !== undefined);
  const first = given[0];
  if (given.some((c) => JSON.stringify(c) !== JSON.stringify(first))) {
    throw new Error('NATS_URL: the servers carry different credentials; give the same to each');
  }
  return first;
}
