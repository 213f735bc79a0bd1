import { readFileSync } from 'node:fs';
import {
  envValue,
  isValidSubjectPrefix,
  readCertificateFile,
  readPrivateKeyFile,
  type Env,
  type EnvName,
} from '@app/contracts';
import { credsAuthenticator, type ConnectionOptions, type TlsOptions } from 'nats';
import { checkCredsFile } from './creds-file';
import { DEFAULT_NATS_URL, parseNatsUrl, type UrlCredentials } from './server-urls';

type AuthOptions = Pick<ConnectionOptions, 'authenticator' | 'token' | 'user' | 'pass'>;

/**
 * The nats.js options of one app's connection: servers (NATS_URL), how it authenticates
 * (NATS_CREDS, NATS_TOKEN, NATS_USER + NATS_PASSWORD, or credentials in NATS_URL), TLS
 * (NATS_TLS_CA, NATS_TLS_CERT + NATS_TLS_KEY, or a `tls://` URL) and the prefix of its reply
 * inboxes (NATS_INBOX_PREFIX, else `inboxPrefix`: the app's own). Undefined when NATS_URL is
 * empty: the app runs without NATS. Reconnect policy is the caller's.
 *
 * Contradictions and unreadable files throw, naming the variable, so the app stops at start. No
 * message quotes a secret.
 */
export function natsConnectionOptions(
  env: Env,
  name: string,
  inboxPrefix: string,
): ConnectionOptions | undefined {
  const servers = parseNatsUrl(env['NATS_URL'] ?? DEFAULT_NATS_URL);
  if (servers === undefined) return undefined;
  const tls = readTls(env, servers.tls);
  return {
    servers: servers.urls,
    name,
    inboxPrefix: readInboxPrefix(env, inboxPrefix),
    ...readAuth(env, servers.credentials),
    ...(tls !== undefined && { tls }),
  };
}

/**
 * nats.js makes every reply subject of the connection (requests, JetStream API answers, a KV
 * watch's deliveries) `<prefix>.<unique>`, so the prefix is what NATS permissions allow.
 */
function readInboxPrefix(env: Env, fallback: string): string {
  const prefix = envValue(env, 'NATS_INBOX_PREFIX') ?? fallback;
  if (!isValidSubjectPrefix(prefix)) {
    throw new Error(
      `NATS_INBOX_PREFIX: "${prefix}" must be dot-separated tokens without spaces or wildcards`,
    );
  }
  return prefix;
}

/** Variables that only mean something together. */
function bothOrNeither(env: Env, first: EnvName, second: EnvName): void {
  const [a, b] = [envValue(env, first), envValue(env, second)];
  if ((a === undefined) === (b === undefined)) return;
  const [set, missing] = a !== undefined ? [first, second] : [second, first];
  throw new Error(`${set} is set without ${missing}: give both or neither`);
}

function readAuth(env: Env, fromUrl: UrlCredentials | undefined): AuthOptions {
  const creds = envValue(env, 'NATS_CREDS');
  const token = envValue(env, 'NATS_TOKEN');
  const user = envValue(env, 'NATS_USER');
  const pass = envValue(env, 'NATS_PASSWORD');
  bothOrNeither(env, 'NATS_USER', 'NATS_PASSWORD');
  const given = [
    creds !== undefined && 'NATS_CREDS',
    token !== undefined && 'NATS_TOKEN',
    user !== undefined && 'NATS_USER',
    fromUrl !== undefined && 'credentials in NATS_URL',
  ].filter((g): g is string => g !== false);
  if (given.length > 1) {
    throw new Error(`${listed(given)} are all set: give one way to authenticate to NATS`);
  }
  if (creds !== undefined) {
    checkCredsFile(creds);
    // Read at each connection, so a rotated file is used by the next one.
    return { authenticator: credsAuthenticator(() => readFileSync(creds)) };
  }
  if (token !== undefined) return { token };
  if (user !== undefined) return { user, pass };
  return fromUrl ?? {};
}

function readTls(env: Env, tlsUrl: boolean): TlsOptions | undefined {
  const caFile = envValue(env, 'NATS_TLS_CA');
  const certFile = envValue(env, 'NATS_TLS_CERT');
  const keyFile = envValue(env, 'NATS_TLS_KEY');
  bothOrNeither(env, 'NATS_TLS_CERT', 'NATS_TLS_KEY');
  if (caFile !== undefined) readCertificateFile('NATS_TLS_CA', caFile);
  if (certFile !== undefined && keyFile !== undefined) checkClientCertificate(certFile, keyFile);
  if (caFile === undefined && certFile === undefined && !tlsUrl) return undefined;
  // File names, not contents: nats.js reads them at each connection (rotated Secrets work).
  return {
    ...(caFile !== undefined && { caFile }),
    ...(certFile !== undefined && keyFile !== undefined && { certFile, keyFile }),
  };
}

/** The client certificate and its key, which must belong together. */
function checkClientCertificate(certFile: string, keyFile: string): void {
  const { certificate } = readCertificateFile('NATS_TLS_CERT', certFile);
  if (!certificate.checkPrivateKey(readPrivateKeyFile('NATS_TLS_KEY', keyFile))) {
    throw new Error(
      `NATS_TLS_KEY: ${keyFile} is not the key of the certificate in NATS_TLS_CERT (${certFile})`,
    );
  }
}

function listed(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
