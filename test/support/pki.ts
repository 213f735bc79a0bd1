/**
 * A throwaway certificate authority made with openssl: a self-signed CA, a server certificate for
 * 127.0.0.1 / localhost and a client certificate, each with its key, as PEM files in `dir`.
 * EC P-256 keys: made in milliseconds even on a loaded machine.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const OPENSSL = existsSync('/usr/bin/openssl') ? '/usr/bin/openssl' : 'openssl';

export interface CertificateFiles {
  readonly cert: string;
  readonly key: string;
}

export interface Pki {
  /** The CA's certificate: what a client or server that trusts this CA is given. */
  readonly ca: string;
  readonly server: CertificateFiles;
  readonly client: CertificateFiles;
}

function openssl(dir: string, args: string[]): void {
  execFileSync(OPENSSL, args, { cwd: dir, stdio: 'pipe' });
}

const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function signed(dir: string, name: string, usage: string, serial: number): CertificateFiles {
  const files = { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  openssl(dir, [
    'req',
    ...newKey,
    '-keyout',
    files.key,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  ]);
  const ext = `${name}.ext`;
  writeFileSync(
    join(dir, ext),
    `subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=${usage}\nbasicConstraints=CA:FALSE\n`,
  );
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-set_serial',
    String(serial),
    '-days',
    '2',
    '-extfile',
    ext,
    '-out',
    files.cert,
  ]);
  return files;
}

/** A CA named `name` and its server and client certificates, written under `dir`. */
export function makePki(dir: string, name = 'test-ca'): Pki {
  mkdirSync(dir, { recursive: true });
  openssl(dir, [
    'req',
    '-x509',
    ...newKey,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return {
    ca: join(dir, 'ca.pem'),
    server: signed(dir, 'server', 'serverAuth', 2),
    client: signed(dir, 'client', 'clientAuth', 3),
  };
}
