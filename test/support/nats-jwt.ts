/**
 * NATS decentralised auth for tests: an operator, a system account and an application account
 * (JetStream enabled), and users of that account as .creds files, signed with nkeys.js as nsc
 * would sign them. The server config that trusts them uses the memory resolver, every account
 * preloaded.
 */
import { randomUUID } from 'node:crypto';
import { createAccount, createOperator, createUser, type KeyPair } from 'nkeys.js';

const encoder = new TextEncoder();
const base64url = (data: string | Uint8Array): string => Buffer.from(data).toString('base64url');

/** A v2 NATS JWT (`ed25519-nkey`): header and claims signed together by `issuer`. */
function encodeJwt(claims: Record<string, unknown>, issuer: KeyPair): string {
  const header = base64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const body = base64url(
    JSON.stringify({
      jti: randomUUID(),
      iat: Math.floor(Date.now() / 1000),
      iss: issuer.getPublicKey(),
      ...claims,
    }),
  );
  const signature = base64url(issuer.sign(encoder.encode(`${header}.${body}`)));
  return `${header}.${body}.${signature}`;
}

const UNLIMITED = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, conn: -1, leaf: -1 };
const JETSTREAM = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };

function accountJwt(name: string, account: KeyPair, operator: KeyPair, jetstream: boolean): string {
  return encodeJwt(
    {
      sub: account.getPublicKey(),
      name,
      nats: {
        type: 'account',
        version: 2,
        limits: { ...UNLIMITED, wildcards: true, ...(jetstream ? JETSTREAM : {}) },
        default_permissions: { pub: {}, sub: {} },
      },
    },
    operator,
  );
}

export interface OperatorMode {
  /** nats-server configuration lines: operator, system account, memory resolver. */
  readonly serverConfig: string;
  /** A .creds file's text for a new user of the application account. */
  userCreds(name: string): string;
  /** A .creds file's text for a user of an account the server does not know. */
  strangerCreds(name: string): string;
}

function credsText(jwt: string, user: KeyPair): string {
  const seed = new TextDecoder().decode(user.getSeed());
  return [
    '-----BEGIN NATS USER JWT-----',
    jwt,
    '------END NATS USER JWT------',
    '',
    '************************* IMPORTANT *************************',
    'NKEY Seed printed below can be used to sign and prove identity.',
    '',
    '-----BEGIN USER NKEY SEED-----',
    seed,
    '------END USER NKEY SEED------',
    '',
  ].join('\n');
}

function userOf(account: KeyPair, name: string): string {
  const user = createUser();
  const jwt = encodeJwt(
    {
      sub: user.getPublicKey(),
      name,
      nats: { type: 'user', version: 2, pub: {}, sub: {}, subs: -1, data: -1, payload: -1 },
    },
    account,
  );
  return credsText(jwt, user);
}

/** An operator and its accounts; `operatorFile` is where the server config finds the operator. */
export function operatorMode(operatorFile: (jwt: string) => string): OperatorMode {
  const operator = createOperator();
  const system = createAccount();
  const app = createAccount();
  const operatorJwt = encodeJwt(
    {
      sub: operator.getPublicKey(),
      name: 'test-operator',
      nats: { type: 'operator', version: 2, system_account: system.getPublicKey() },
    },
    operator,
  );
  const preload = [
    [system.getPublicKey(), accountJwt('SYS', system, operator, false)],
    [app.getPublicKey(), accountJwt('APP', app, operator, true)],
  ];
  const serverConfig = [
    `operator: "${operatorFile(operatorJwt)}"`,
    `system_account: ${system.getPublicKey()}`,
    'resolver: MEMORY',
    'resolver_preload: {',
    ...preload.map(([key, jwt]) => `  ${key}: "${jwt}"`),
    '}',
  ].join('\n');
  return {
    serverConfig,
    userCreds: (name) => userOf(app, name),
    strangerCreds: (name) => userOf(createAccount(), name),
  };
}
