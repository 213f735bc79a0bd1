/**
 * Secured connections, TLS (issue 12, point 6): a private nats-server with a certificate of a
 * CA the test made, `verify: true`, so every client must present a certificate of that CA. The
 * limiter and the admin with NATS_TLS_CA, NATS_TLS_CERT and NATS_TLS_KEY work end to end; a
 * server certificate of an untrusted CA, or no client certificate, is refused: /readyz says why,
 * the reason is logged once, HTTP is still served.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makePki } from './support/pki';
import {
  refusedButServing,
  servesEndToEnd,
  startSecuredNats,
  type SecuredNats,
} from './support/secured-nats';

jest.setTimeout(180_000);

const root = mkdtempSync(join(tmpdir(), 'nats-secured-tls-'));
const pki = makePki(join(root, 'pki'));
const untrusted = makePki(join(root, 'untrusted'), 'untrusted-ca');
let server: SecuredNats;

beforeAll(async () => {
  server = await startSecuredNats(
    join(root, 'nats'),
    [
      'tls {',
      `  cert_file: "${pki.server.cert}"`,
      `  key_file: "${pki.server.key}"`,
      `  ca_file: "${pki.ca}"`,
      '  verify: true',
      '}',
    ].join('\n'),
  );
});

afterAll(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

const clientOf = (ca: string, cert = pki.client) => ({
  NATS_TLS_CA: ca,
  NATS_TLS_CERT: cert.cert,
  NATS_TLS_KEY: cert.key,
});

const refused = (
  kind: 'limiter' | 'admin',
  name: string,
  env: Record<string, string>,
  why: RegExp,
) => refusedButServing(server, kind, join(root, name), env, why);

describe('TLS with a client certificate (verify: true)', () => {
  it('serves end to end with the CA, certificate and key', async () => {
    await servesEndToEnd(
      join(root, 'ok'),
      { NATS_URL: server.url, ...clientOf(pki.ca) },
      {
        servers: server.url,
        tls: { caFile: pki.ca, certFile: pki.client.cert, keyFile: pki.client.key },
      },
    );
  });

  it('refuses a server whose certificate an untrusted CA signed', async () => {
    await refused('limiter', 'untrusted', clientOf(untrusted.ca), /unable to verify/);
    await refused('admin', 'untrusted-admin', clientOf(untrusted.ca), /unable to verify/);
  });

  it('is refused by the server without a client certificate', async () => {
    // TLS 1.3: the server refuses the certificate after the client's handshake is done.
    await refused('limiter', 'no-cert', { NATS_TLS_CA: pki.ca }, /alert bad certificate/);
  });
});
